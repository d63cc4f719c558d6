import type { ActionType, Language } from '../domain/model.ts';

const en = {
  title: 'Document approval',
  reference: 'Reference',
  from: 'From',
  yourAction: 'Your action',
  actions: {
    sign: 'Sign',
    stamp: 'Stamp',
    approve_only: 'Approve',
    review_only: 'Mark as reviewed',
  } satisfies Record<ActionType, string>,
  drawHint: 'Draw your signature in the box',
  clear: 'Clear',
  orType: 'Or type your full name',
  typedLabel: 'Full name',
  uploadStamp: 'Upload a stamp image (PNG or JPEG)',
  useSeal: 'Use a seal generated from my name, role and today’s date',
  submit: {
    sign: 'Sign the document',
    stamp: 'Stamp the document',
    approve_only: 'Approve',
    review_only: 'Mark as reviewed',
  } satisfies Record<ActionType, string>,
  reject: 'Reject',
  rejectReason: 'Reason (optional)',
  rejectConfirm: 'Reject the document',
  openPdf: 'Open the PDF',
  loadingPdf: 'Loading the document…',
  pages: 'pages',
  doneTitle: 'Thank you',
  doneCompleted: 'Your action has been recorded. You can close this page.',
  doneRejected: 'You rejected the document. The sender has been told.',
  language: 'العربية',
  errors: {
    needSignature: 'Draw your signature or type your name first.',
    needStamp: 'Choose a stamp image or the generated seal first.',
    gone: 'This link can no longer be used.',
    conflict: 'It is not your turn yet. You will get a message when it is.',
    generic: 'Something went wrong. Please try again.',
  },
  /** Why an image sent to POST /a/{token}/complete was refused (422). */
  images: {
    signature: {
      notPng: 'The signature must be a PNG image; draw it again.',
      damaged: 'The signature image is damaged; draw it again.',
      tooLarge: (max: number) =>
        `The signature image is too large (at most ${max} × ${max} pixels); draw it again.`,
      tooManyBytes: (mb: number) => `The signature image is larger than ${mb} MB; draw it again.`,
    },
    stamp: {
      notPng: 'The stamp must be a PNG image; choose it again.',
      damaged: 'The stamp image is damaged; choose it again or use the generated seal.',
      tooLarge: (max: number) =>
        `The stamp image is too large (at most ${max} × ${max} pixels); choose a smaller one.`,
      tooManyBytes: (mb: number) => `The stamp image is larger than ${mb} MB; choose a smaller one.`,
    },
  },
  closed: {
    already_acted: 'You have already acted on this document.',
    document_closed: 'This document is no longer open for approval',
    not_your_turn: 'It is not your turn yet. You will get a WhatsApp message when it is.',
  },
};

const ar: typeof en = {
  title: 'اعتماد مستند',
  reference: 'الرقم المرجعي',
  from: 'من',
  yourAction: 'الإجراء المطلوب منك',
  actions: { sign: 'توقيع', stamp: 'ختم', approve_only: 'موافقة', review_only: 'تأكيد المراجعة' },
  drawHint: 'ارسم توقيعك داخل المربع',
  clear: 'مسح',
  orType: 'أو اكتب اسمك الكامل',
  typedLabel: 'الاسم الكامل',
  uploadStamp: 'ارفع صورة الختم (PNG أو JPEG)',
  useSeal: 'استخدم ختمًا يُنشأ من اسمي ومسمّاي الوظيفي وتاريخ اليوم',
  submit: {
    sign: 'وقّع المستند',
    stamp: 'اختم المستند',
    approve_only: 'موافقة',
    review_only: 'تأكيد المراجعة',
  },
  reject: 'رفض',
  rejectReason: 'السبب (اختياري)',
  rejectConfirm: 'رفض المستند',
  openPdf: 'فتح ملف PDF',
  loadingPdf: 'جارٍ تحميل المستند…',
  pages: 'صفحات',
  doneTitle: 'شكرًا لك',
  doneCompleted: 'تم تسجيل إجرائك. يمكنك إغلاق هذه الصفحة.',
  doneRejected: 'لقد رفضت المستند، وتم إبلاغ المرسل.',
  language: 'English',
  errors: {
    needSignature: 'ارسم توقيعك أو اكتب اسمك أولًا.',
    needStamp: 'اختر صورة الختم أو الختم المُنشأ أولًا.',
    gone: 'لم يعد بالإمكان استخدام هذا الرابط.',
    conflict: 'لم يحن دورك بعد. ستصلك رسالة عندما يحين.',
    generic: 'حدث خطأ ما. حاول مرة أخرى.',
  },
  images: {
    signature: {
      notPng: 'يجب أن يكون التوقيع صورة PNG؛ ارسمه مرة أخرى.',
      damaged: 'صورة التوقيع تالفة؛ ارسمه مرة أخرى.',
      tooLarge: (max: number) => `صورة التوقيع كبيرة جدًا (الحد الأقصى ${max} × ${max} بكسل)؛ ارسمه مرة أخرى.`,
      tooManyBytes: (mb: number) => `حجم صورة التوقيع أكبر من ${mb} ميغابايت؛ ارسمه مرة أخرى.`,
    },
    stamp: {
      notPng: 'يجب أن يكون الختم صورة PNG؛ اخترها مرة أخرى.',
      damaged: 'صورة الختم تالفة؛ اخترها مرة أخرى أو استخدم الختم المُنشأ.',
      tooLarge: (max: number) => `صورة الختم كبيرة جدًا (الحد الأقصى ${max} × ${max} بكسل)؛ اختر صورة أصغر.`,
      tooManyBytes: (mb: number) => `حجم صورة الختم أكبر من ${mb} ميغابايت؛ اختر صورة أصغر.`,
    },
  },
  closed: {
    already_acted: 'لقد اتخذت إجراءً على هذا المستند مسبقًا.',
    document_closed: 'لم يعد هذا المستند متاحًا للاعتماد',
    not_your_turn: 'لم يحن دورك بعد. ستصلك رسالة واتساب عندما يحين.',
  },
};

export const STRINGS: Record<Language, typeof en> = { ar, en };
export type PageStrings = typeof en;
