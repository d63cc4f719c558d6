import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { ActionType, ApprovalChannel, FinalizeApprover } from '../types.ts';
import type { VerifiedBy } from '../../domain/model.ts';

/** Isolates a left-to-right fragment (dates, numbers, ids) so bidi keeps it whole inside Arabic text. */
export const ltr = (text: string) => `\u2066${text}\u2069`;

const pad = (n: number) => String(n).padStart(2, '0');

export function formatUtc(date: Date): string {
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(
    date.getUTCHours(),
  )}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} UTC`;
}

const riyadhParts = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Asia/Riyadh',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
  timeZoneName: 'longOffset',
});

/** "2026-01-15 13:00:00 GMT+03:00 (Asia/Riyadh)". */
export function formatRiyadh(date: Date): string {
  const p = Object.fromEntries(riyadhParts.formatToParts(date).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} ${p.timeZoneName} (Asia/Riyadh)`;
}

const hijriEn = new Intl.DateTimeFormat('en-u-ca-islamic-umalqura-nu-latn', {
  timeZone: 'Asia/Riyadh',
  day: 'numeric',
  month: 'long',
  year: 'numeric',
});
// Western digits, as everywhere else on the certificate.
const hijriAr = new Intl.DateTimeFormat('ar-SA-u-ca-islamic-umalqura-nu-latn', {
  timeZone: 'Asia/Riyadh',
  day: 'numeric',
  month: 'long',
  year: 'numeric',
});

/** The calendar date in Riyadh in the Umm al-Qura Hijri calendar (Intl's `islamic-umalqura`), as parts. */
export function hijriParts(
  date: Date,
  lang: 'en' | 'ar',
): { day: string; month: string; year: string; era: string } {
  const p = Object.fromEntries(
    (lang === 'en' ? hijriEn : hijriAr).formatToParts(date).map((x) => [x.type, x.value]),
  );
  return { day: p.day ?? '', month: p.month ?? '', year: p.year ?? '', era: p.era ?? '' };
}

/**
 * The time in the Umm al-Qura Hijri calendar, in both languages, with the time zone stated: the date is Riyadh's
 * civil date (the day changes at midnight, as in the official calendar), the time Riyadh's. English
 * "13 Jumada II 1448 AH, 13:00:00 GMT+03:00 (Asia/Riyadh)"; Arabic "13 جمادى الآخرة 1448 هـ، 13:00:00 GMT+03:00
 * (توقيت الرياض)".
 */
export function formatHijri(date: Date): { en: string; ar: string } {
  const t = Object.fromEntries(riyadhParts.formatToParts(date).map((x) => [x.type, x.value]));
  const time = `${t.hour}:${t.minute}:${t.second} ${t.timeZoneName}`;
  const en = hijriParts(date, 'en');
  const ar = hijriParts(date, 'ar');
  return {
    en: `${en.day} ${en.month} ${en.year} ${en.era}, ${time} (Asia/Riyadh)`,
    ar: `${ltr(ar.day)} ${ar.month} ${ltr(ar.year)} ${ar.era}، ${ltr(time)} (توقيت الرياض)`,
  };
}

/** Both times on one line, for boxes with little room. */
export function formatShortTimes(date: Date): string {
  const p = Object.fromEntries(riyadhParts.formatToParts(date).map((x) => [x.type, x.value]));
  return `${formatUtc(date)} · ${p.hour}:${p.minute} Riyadh`;
}

/** "+966 •••••4567": the country code and the last four digits; the rest is personal data the page need not show. */
export function maskPhone(digits: string): string {
  const clean = digits.replace(/\D/g, '');
  const parsed = parsePhoneNumberFromString(`+${clean}`);
  const cc = parsed?.countryCallingCode ?? '';
  const national = parsed ? parsed.nationalNumber : clean;
  const shown = national.slice(-4);
  return `${cc ? `+${cc} ` : ''}${'•'.repeat(Math.max(0, national.length - shown.length))}${shown}`;
}

export const ACTION_LABEL: Record<ActionType, { en: string; ar: string }> = {
  sign: { en: 'Sign', ar: 'توقيع' },
  stamp: { en: 'Stamp', ar: 'ختم' },
  approve_only: { en: 'Approve', ar: 'موافقة' },
  review_only: { en: 'Review', ar: 'مراجعة' },
};

export const CHANNEL_LABEL: Record<ApprovalChannel, { en: string; ar: string }> = {
  whatsapp: { en: 'WhatsApp button', ar: 'زر واتساب' },
  page: { en: 'Approval page', ar: 'صفحة الموافقة' },
};

/** What the approver actually did, in both languages; `unreadableImage`: their image was replaced by their name. */
export function outcome(a: FinalizeApprover, unreadableImage = false): { en: string; ar: string } {
  const image = a.actionType === 'sign' ? a.signaturePng : a.stampPng;
  return describeOutcome({ ...a, image: Boolean(image) }, unreadableImage);
}

/** What the certificate and the verification page say an approver did; `image`: a drawn or uploaded image. */
export interface OutcomeFacts {
  status: string;
  actionType: ActionType;
  image: boolean;
  typedName?: string | null;
  nameEn: string;
  nameAr: string;
}

export function describeOutcome(a: OutcomeFacts, unreadableImage = false): { en: string; ar: string } {
  if (a.status !== 'completed') return { en: a.status, ar: a.status };
  switch (a.actionType) {
    case 'sign':
      if (a.image && unreadableImage) {
        return {
          en: 'Signed (drawn signature; the image could not be read, so the name is shown in its place)',
          ar: 'وقّع (توقيع مرسوم؛ تعذّرت قراءة صورته، فيظهر الاسم مكانه)',
        };
      }
      if (a.image) return { en: 'Signed (drawn signature)', ar: 'وقّع (توقيع مرسوم)' };
      return {
        en: `Signed (typed name: ${a.typedName ?? a.nameEn})`,
        ar: `وقّع (اسم مكتوب: ${a.typedName ?? a.nameAr})`,
      };
    case 'stamp':
      if (a.image && unreadableImage) {
        return {
          en: 'Stamped (uploaded stamp; the image could not be read, so the name is shown in its place)',
          ar: 'ختم (ختم مرفوع؛ تعذّرت قراءة صورته، فيظهر الاسم مكانه)',
        };
      }
      if (a.image) return { en: 'Stamped (uploaded stamp)', ar: 'ختم (ختم مرفوع)' };
      return { en: 'Stamped (generated seal)', ar: 'ختم (ختم مُولَّد)' };
    case 'approve_only':
      return { en: 'Approved', ar: 'وافق' };
    case 'review_only':
      return { en: 'Reviewed', ar: 'راجع' };
  }
}

export const VERIFIED_BY_LABEL: Record<VerifiedBy, { en: string; ar: string }> = {
  whatsapp_otp: { en: 'WhatsApp one-time code', ar: 'رمز تحقق لمرة واحدة عبر واتساب' },
  whatsapp_reply: { en: 'WhatsApp reply', ar: 'رد عبر واتساب' },
  none: { en: 'None', ar: 'بدون تحقق' },
};

export const REMINDER_KIND_LABEL: Record<
  'manual' | 'automatic' | 'expires_tomorrow',
  { en: string; ar: string }
> = {
  manual: { en: 'manual reminder', ar: 'تذكير يدوي' },
  automatic: { en: 'automatic reminder', ar: 'تذكير تلقائي' },
  expires_tomorrow: { en: 'automatic "expires tomorrow" reminder', ar: 'تذكير تلقائي بانتهاء المهلة غدًا' },
};

export const LABELS = {
  certificateTitle: { en: 'Audit certificate', ar: 'شهادة التدقيق' },
  continued: { en: 'Audit certificate (continued)', ar: 'شهادة التدقيق (تابع)' },
  signaturesTitle: { en: 'Signatures and stamps', ar: 'التوقيعات والأختام' },
  document: { en: 'Document', ar: 'المستند' },
  reference: { en: 'Reference', ar: 'الرقم المرجعي' },
  title: { en: 'Title', ar: 'العنوان' },
  account: { en: 'Account', ar: 'الحساب' },
  sha256: { en: 'SHA-256 of the original file', ar: 'بصمة SHA-256 للملف الأصلي' },
  originalPages: { en: 'Pages of the original', ar: 'صفحات الأصل' },
  created: { en: 'Created', ar: 'تاريخ الإنشاء' },
  sent: { en: 'Sent', ar: 'تاريخ الإرسال' },
  completed: { en: 'Completed', ar: 'تاريخ الاكتمال' },
  approver: { en: 'Approver', ar: 'المعتمِد' },
  of: { en: 'of', ar: 'من' },
  name: { en: 'Name', ar: 'الاسم' },
  role: { en: 'Role', ar: 'المسمى الوظيفي' },
  phone: { en: 'Phone', ar: 'رقم الجوال' },
  action: { en: 'Action requested', ar: 'الإجراء المطلوب' },
  result: { en: 'What they did', ar: 'ما قام به' },
  channel: { en: 'Channel', ar: 'القناة' },
  verifiedBy: { en: 'Verified by', ar: 'طريقة التحقق' },
  reminders: { en: 'Reminders sent', ar: 'التذكيرات المرسلة' },
  noReminders: { en: 'None', ar: 'لا يوجد' },
  timeUtc: { en: 'Time (UTC)', ar: 'الوقت (UTC)' },
  timeRiyadh: { en: 'Time (Riyadh)', ar: 'الوقت (الرياض)' },
  timeHijri: { en: 'Hijri date (Umm al-Qura)', ar: 'التاريخ الهجري (أم القرى)' },
  verifyTitle: { en: 'Verify this document', ar: 'التحقق من هذا المستند' },
  verifyHow: {
    en: 'Scan the code or open the address below: it shows who approved the document and when, and tells whether a PDF is this signed file.',
    ar: 'امسح الرمز أو افتح الرابط أدناه: تعرض الصفحة من اعتمد المستند ومتى، وتبيّن هل ملف PDF هو هذا الملف الموقّع.',
  },
  delegatedBy: { en: 'Delegated by', ar: 'مفوَّض من' },
  delegatedAt: { en: 'Delegated at', ar: 'وقت التفويض' },
  delegationReason: { en: 'Reason for delegation', ar: 'سبب التفويض' },
  ip: { en: 'IP address', ar: 'عنوان IP' },
  userAgent: { en: 'User agent', ar: 'المتصفح' },
  whatsappId: { en: 'WhatsApp message id', ar: 'معرّف رسالة واتساب' },
  page: { en: 'Page', ar: 'صفحة' },
  statement: {
    en: 'This certificate records how the document above was approved. The file is sealed with a digital signature: any change made after signing invalidates it.',
    ar: 'توثّق هذه الشهادة مسار اعتماد المستند أعلاه. الملف مختوم بتوقيع رقمي، وأي تعديل عليه بعد التوقيع يُبطل التوقيع.',
  },
  typed: { en: 'typed', ar: 'مكتوب' },
} as const;
