import type { ActionType, Language } from '../domain/model.ts';

const en = {
  title: 'Document verification',
  language: 'العربية',
  intro:
    'This page belongs to the document whose audit certificate printed its address. It shows what the certificate records.',
  approvedOn: 'Approved and digitally signed on',
  reference: 'Reference',
  titleEn: 'Title (English)',
  titleAr: 'Title (Arabic)',
  from: 'Sent by',
  signature: 'Digital signature',
  signatureLevel: (level: string) => `PAdES, level ${level}`,
  signaturePades: 'PAdES (the signature is embedded in the PDF)',
  signedBy: 'Signing certificate',
  signedSha256: 'SHA-256 of the signed file',
  originalSha256: 'SHA-256 of the original file',
  approvers: 'Approvers',
  role: 'Role',
  phone: 'Phone',
  action: 'Action requested',
  did: 'What they did',
  channel: 'Channel',
  time: 'Time',
  hijri: 'Hijri date (Umm al-Qura)',
  actions: { sign: 'Sign', stamp: 'Stamp', approve_only: 'Approve', review_only: 'Review' } satisfies Record<
    ActionType,
    string
  >,
  channels: { whatsapp: 'WhatsApp button', page: 'Approval page' },
  checkTitle: 'Is my PDF this signed document?',
  checkHelp:
    'Drop a PDF here, or choose one. Your browser computes its SHA-256 fingerprint and compares it with the signed file’s; the file does not leave your device.',
  checkHelpServer:
    'Your browser cannot compute the fingerprint here, so the file is sent to this server, which computes it and keeps nothing.',
  choose: 'Choose a PDF',
  dropHere: 'Drop the PDF here',
  checking: 'Checking…',
  verdictSigned: (date: string) => `This is the signed file, byte for byte (signed on ${date}).`,
  verdictOriginal:
    'This file differs from the signed document: it is the original file as uploaded, before approval and signing.',
  verdictDifferent:
    'This file differs from the signed document. It is not this document’s signed file (even a single changed byte gives a different fingerprint).',
  fingerprint: 'SHA-256 of your file',
  tooLarge: (mb: number) => `The file is larger than ${mb} MB; it cannot be checked here.`,
  failed: 'The file could not be checked. Please try again.',
  notFoundTitle: 'Nothing to verify',
  notFound: 'There is no signed document at this address. Check the address printed on the certificate.',
  rateLimited: 'Too many requests from your address. Please wait a minute and try again.',
};

const ar: typeof en = {
  title: 'التحقق من المستند',
  language: 'English',
  intro: 'تخص هذه الصفحة المستند الذي طُبع عنوانها على شهادة التدقيق الخاصة به، وتعرض ما تسجّله الشهادة.',
  approvedOn: 'اعتُمد ووُقّع رقميًا في',
  reference: 'الرقم المرجعي',
  titleEn: 'العنوان (بالإنجليزية)',
  titleAr: 'العنوان (بالعربية)',
  from: 'المرسِل',
  signature: 'التوقيع الرقمي',
  signatureLevel: (level: string) => `PAdES، المستوى ${level}`,
  signaturePades: 'PAdES (التوقيع مضمَّن في ملف PDF)',
  signedBy: 'شهادة التوقيع',
  signedSha256: 'بصمة SHA-256 للملف الموقّع',
  originalSha256: 'بصمة SHA-256 للملف الأصلي',
  approvers: 'المعتمِدون',
  role: 'المسمى الوظيفي',
  phone: 'رقم الجوال',
  action: 'الإجراء المطلوب',
  did: 'ما قام به',
  channel: 'القناة',
  time: 'الوقت',
  hijri: 'التاريخ الهجري (أم القرى)',
  actions: { sign: 'توقيع', stamp: 'ختم', approve_only: 'موافقة', review_only: 'مراجعة' },
  channels: { whatsapp: 'زر واتساب', page: 'صفحة الموافقة' },
  checkTitle: 'هل ملف PDF الذي لديّ هو هذا المستند الموقّع؟',
  checkHelp:
    'أفلت ملف PDF هنا أو اختره. يحسب متصفحك بصمة SHA-256 للملف ويقارنها ببصمة الملف الموقّع، ولا يغادر الملف جهازك.',
  checkHelpServer:
    'لا يستطيع متصفحك حساب البصمة هنا، لذا يُرسل الملف إلى هذا الخادم ليحسبها دون أن يحتفظ بشيء.',
  choose: 'اختر ملف PDF',
  dropHere: 'أفلت ملف PDF هنا',
  checking: 'جارٍ التحقق…',
  verdictSigned: (date: string) => `هذا هو الملف الموقّع نفسه، بايتًا ببايت (وُقّع في ${date}).`,
  verdictOriginal: 'هذا الملف يختلف عن المستند الموقّع: إنه الملف الأصلي كما رُفع، قبل الاعتماد والتوقيع.',
  verdictDifferent:
    'هذا الملف يختلف عن المستند الموقّع، وليس الملف الموقّع لهذا المستند (تغيير بايت واحد يكفي لتغيير البصمة).',
  fingerprint: 'بصمة SHA-256 لملفك',
  tooLarge: (mb: number) => `حجم الملف أكبر من ${mb} ميغابايت، فلا يمكن التحقق منه هنا.`,
  failed: 'تعذّر التحقق من الملف. حاول مرة أخرى.',
  notFoundTitle: 'لا يوجد ما يُتحقق منه',
  notFound: 'لا يوجد مستند موقّع على هذا العنوان. تأكد من العنوان المطبوع على الشهادة.',
  rateLimited: 'طلبات كثيرة من عنوانك. انتظر دقيقة ثم حاول مرة أخرى.',
};

export const VERIFY_STRINGS: Record<Language, typeof en> = { ar, en };
