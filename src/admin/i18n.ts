import { BULK_SEND_STRINGS } from './i18n-bulk-send.ts';
import { SECOND_FACTOR_STRINGS } from './i18n-second-factor.ts';

/**
 * Every string the dashboard shows, in English and Arabic, in one table. The type requires both languages for
 * every key, so a missing translation is a compile error. `{name}` placeholders are filled by `translator`;
 * the result is plain text (escaped by the `html` tag like any other value).
 */
export const LOCALES = ['en', 'ar'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

export const DIRECTION: Record<Locale, 'ltr' | 'rtl'> = { en: 'ltr', ar: 'rtl' };
export const LANGUAGE_NAME: Record<Locale, string> = { en: 'English', ar: 'العربية' };

const STRINGS = {
  ...SECOND_FACTOR_STRINGS,
  ...BULK_SEND_STRINGS,
  appName: { en: 'Wathiq', ar: 'واثق' },
  dashboard: { en: 'Dashboard', ar: 'لوحة التحكم' },
  skipToContent: { en: 'Skip to main content', ar: 'انتقل إلى المحتوى الرئيسي' },
  mainNav: { en: 'Main', ar: 'القائمة الرئيسية' },
  navHome: { en: 'Overview', ar: 'نظرة عامة' },
  navApiKeys: { en: 'API keys', ar: 'مفاتيح API' },
  signOut: { en: 'Sign out', ar: 'تسجيل الخروج' },
  signedInAs: { en: 'Signed in as', ar: 'مسجّل الدخول بالحساب' },
  switchLanguage: { en: 'Language', ar: 'اللغة' },
  dash: { en: '—', ar: '—' },
  never: { en: 'Never', ar: 'لم يُستخدم بعد' },

  // Sign-in
  loginTitle: { en: 'Sign in', ar: 'تسجيل الدخول' },
  loginIntro: {
    en: 'Sign in to manage your API keys and follow your documents.',
    ar: 'سجّل الدخول لإدارة مفاتيح API ومتابعة مستنداتك.',
  },
  email: { en: 'Email', ar: 'البريد الإلكتروني' },
  password: { en: 'Password', ar: 'كلمة المرور' },
  signIn: { en: 'Sign in', ar: 'دخول' },
  loginMissingFields: { en: 'Enter your email and password.', ar: 'أدخل بريدك الإلكتروني وكلمة المرور.' },
  loginFailed: {
    en: 'The email or password is incorrect.',
    ar: 'البريد الإلكتروني أو كلمة المرور غير صحيحة.',
  },
  loginAttemptsLeft: {
    en: 'Failed attempts left before each further attempt has to wait: {count}.',
    ar: 'المحاولات الفاشلة المتبقية قبل أن تضطر كل محاولة تالية إلى الانتظار: {count}.',
  },
  loginWait: {
    en: 'Too many failed sign-in attempts. Seconds to wait before the next attempt: {seconds}.',
    ar: 'محاولات دخول فاشلة كثيرة. الثواني المتبقية قبل المحاولة التالية: {seconds}.',
  },
  flashSignedOut: { en: 'You have signed out.', ar: 'تم تسجيل خروجك.' },
  flashExpired: {
    en: 'Your session has ended. Please sign in again.',
    ar: 'انتهت جلستك. يُرجى تسجيل الدخول مرة أخرى.',
  },
  flashRevoked: {
    en: 'The key has been revoked. Requests that use it are refused from now on.',
    ar: 'تم إلغاء المفتاح. ستُرفض الطلبات التي تستخدمه من الآن فصاعدًا.',
  },
  flashAlreadyRevoked: { en: 'This key was already revoked.', ar: 'هذا المفتاح ملغى من قبل.' },

  // API keys
  keysTitle: { en: 'API keys', ar: 'مفاتيح API' },
  keysIntro: {
    en: 'Your systems call the Wathiq API with a key and its secret, sent in this header:',
    ar: 'تتصل أنظمتك بواجهة واثق البرمجية باستخدام مفتاح وسرّه، يُرسلان في هذه الترويسة:',
  },
  planHeading: { en: 'Your plan', ar: 'خطتك' },
  planLine: {
    en: '{plan} plan: up to {limit} requests per minute for each key.',
    ar: 'خطة {plan}: حتى {limit} طلب في الدقيقة لكل مفتاح.',
  },
  'plan.basic': { en: 'Basic', ar: 'الأساسية' },
  'plan.business': { en: 'Business', ar: 'الأعمال' },
  'plan.enterprise': { en: 'Enterprise', ar: 'المؤسسات' },
  keysListHeading: { en: 'Your keys', ar: 'مفاتيحك' },
  keysNone: { en: 'You have no API keys yet.', ar: 'لا توجد لديك مفاتيح API بعد.' },
  colName: { en: 'Name', ar: 'الاسم' },
  colKey: { en: 'Key prefix', ar: 'بادئة المفتاح' },
  colScopes: { en: 'Scopes', ar: 'الصلاحيات' },
  colCreated: { en: 'Created', ar: 'تاريخ الإنشاء' },
  colLastUsed: { en: 'Last used', ar: 'آخر استخدام' },
  colStatus: { en: 'Status', ar: 'الحالة' },
  colActions: { en: 'Actions', ar: 'الإجراءات' },
  keyActive: { en: 'Active', ar: 'نشط' },
  keyRevoked: { en: 'Revoked', ar: 'ملغى' },
  revoke: { en: 'Revoke', ar: 'إلغاء' },
  revokeKeyNamed: { en: 'Revoke the key “{name}”', ar: 'إلغاء المفتاح «{name}»' },
  revokeConfirm: {
    en: 'Revoke this key? Applications that use it stop working at once.',
    ar: 'هل تريد إلغاء هذا المفتاح؟ ستتوقف التطبيقات التي تستخدمه عن العمل فورًا.',
  },
  createHeading: { en: 'Create a key', ar: 'إنشاء مفتاح' },
  keyName: { en: 'Name', ar: 'الاسم' },
  keyNameHint: {
    en: 'So you can tell your keys apart, for example “ERP production”.',
    ar: 'ليسهل عليك التمييز بين مفاتيحك، مثل «نظام ERP - الإنتاج».',
  },
  scopesLegend: { en: 'Scopes', ar: 'الصلاحيات' },
  scopesHint: {
    en: 'What this key may do. Choose at least one. Sending, changing or voiding documents, and creating, changing or redelivering webhooks, also need “Read documents”: they show or send out document data.',
    ar: 'ما يُسمح لهذا المفتاح بفعله. اختر صلاحية واحدة على الأقل. إرسال المستندات أو تعديلها أو إبطالها، وإنشاء الويب هوك أو تعديلها أو إعادة التسليم، تحتاج أيضًا إلى «قراءة المستندات»: فهي تعرض بيانات المستندات أو ترسلها.',
  },
  'scope.documents:read': { en: 'Read documents and their status', ar: 'قراءة المستندات وحالتها' },
  'scope.documents:write': {
    en: 'Create, send, change and void documents',
    ar: 'إنشاء المستندات وإرسالها وتعديلها وإبطالها',
  },
  'scope.webhooks:read': { en: 'Read webhooks and deliveries', ar: 'قراءة الويب هوك وعمليات التسليم' },
  'scope.webhooks:write': { en: 'Create, change and delete webhooks', ar: 'إنشاء الويب هوك وتعديلها وحذفها' },
  createKey: { en: 'Create key', ar: 'إنشاء المفتاح' },
  errorSummary: { en: 'Please correct the following:', ar: 'يُرجى تصحيح ما يلي:' },
  errorNameRequired: { en: 'Enter a name for the key.', ar: 'أدخل اسمًا للمفتاح.' },
  errorNameTooLong: {
    en: 'The name can be at most 255 characters.',
    ar: 'يجب ألا يزيد الاسم على 255 حرفًا.',
  },
  errorBidiControls: {
    en: 'Remove the hidden text-direction characters (U+202A to U+202E, U+2066 to U+2069) from the name.',
    ar: 'احذف محارف اتجاه النص المخفية (U+202A إلى U+202E، وU+2066 إلى U+2069) من الاسم.',
  },
  errorScopesRequired: { en: 'Choose at least one scope.', ar: 'اختر صلاحية واحدة على الأقل.' },
  errorTooManyKeys: {
    en: 'This account already has {max} active keys, the most it may have: revoke one it no longer uses, then create the new one.',
    ar: 'لدى هذا الحساب {max} مفاتيح نشطة، وهو الحد الأقصى: ألغِ مفتاحًا لم تعد تستخدمه، ثم أنشئ المفتاح الجديد.',
  },
  newKeyHeading: { en: 'Your new key “{name}”', ar: 'مفتاحك الجديد «{name}»' },
  newKeyOnce: {
    en: 'Copy the secret now. It is shown only this once and cannot be recovered: if you lose it, revoke the key and create another.',
    ar: 'انسخ السر الآن. لن يُعرض إلا هذه المرة ولا يمكن استرجاعه: إذا فقدته فألغِ المفتاح وأنشئ مفتاحًا آخر.',
  },
  newKeyKey: { en: 'API key', ar: 'مفتاح API' },
  newKeySecret: { en: 'Secret', ar: 'السر' },
  newKeyHeader: { en: 'Authorization header', ar: 'ترويسة التفويض (Authorization)' },
  copy: { en: 'Copy', ar: 'نسخ' },
  copyWhat: { en: 'Copy {what}', ar: 'نسخ {what}' },
  copied: { en: 'Copied to the clipboard.', ar: 'تم النسخ إلى الحافظة.' },
  copyFailed: {
    en: 'Could not copy: select the text and copy it yourself.',
    ar: 'تعذّر النسخ: حدّد النص وانسخه بنفسك.',
  },

  // Overview
  homeTitle: { en: 'Overview', ar: 'نظرة عامة' },
  welcome: { en: 'Welcome, {name}', ar: 'مرحبًا، {name}' },
  docsHeading: { en: 'Documents', ar: 'المستندات' },
  docsByStatus: { en: 'Documents by status', ar: 'المستندات حسب الحالة' },
  docsLatest: { en: 'Latest documents', ar: 'أحدث المستندات' },
  docsNone: {
    en: 'No documents yet. Documents you create through the API appear here.',
    ar: 'لا توجد مستندات بعد. ستظهر هنا المستندات التي تنشئها عبر واجهة API.',
  },
  total: { en: 'Total', ar: 'الإجمالي' },
  'status.draft': { en: 'Draft', ar: 'مسودة' },
  'status.pending': { en: 'Pending', ar: 'بانتظار الاعتماد' },
  'status.in_progress': { en: 'In progress', ar: 'قيد الاعتماد' },
  'status.approved': { en: 'Approved', ar: 'معتمد' },
  'status.rejected': { en: 'Rejected', ar: 'مرفوض' },
  'status.expired': { en: 'Expired', ar: 'منتهي المهلة' },
  'status.voided': { en: 'Voided', ar: 'مُبطل' },
  colReference: { en: 'Reference', ar: 'الرقم المرجعي' },
  colTitle: { en: 'Title', ar: 'العنوان' },
  colApprovers: { en: 'Approvers', ar: 'المعتمدون' },
  approversProgress: { en: '{done} of {total} done', ar: '{done} من {total} أنجزوا' },
  webhooksHeading: { en: 'Webhooks', ar: 'الويب هوك' },
  webhooksNone: {
    en: 'No webhooks yet. Webhooks you register through the API appear here.',
    ar: 'لا توجد ويب هوك بعد. ستظهر هنا الويب هوك التي تسجّلها عبر واجهة API.',
  },
  colUrl: { en: 'URL', ar: 'الرابط' },
  colEvents: { en: 'Events', ar: 'الأحداث' },
  colLastDelivery: { en: 'Last delivery', ar: 'آخر تسليم' },
  webhookActive: { en: 'Active', ar: 'نشط' },
  webhookDisabled: { en: 'Disabled', ar: 'معطّل' },
  noDeliveries: { en: 'No deliveries yet', ar: 'لا توجد عمليات تسليم بعد' },
  httpStatus: { en: 'HTTP {code}', ar: 'HTTP {code}' },
  attempts: { en: 'Attempts: {count}', ar: 'المحاولات: {count}' },
  'delivery.pending': { en: 'Pending', ar: 'قيد الانتظار' },
  'delivery.retrying': { en: 'Retrying', ar: 'تُعاد المحاولة' },
  'delivery.succeeded': { en: 'Delivered', ar: 'تم التسليم' },
  'delivery.delivered': { en: 'Delivered', ar: 'تم التسليم' },
  'delivery.failed': { en: 'Failed', ar: 'فشل' },
  sectionUnavailable: {
    en: 'This section cannot be shown right now.',
    ar: 'لا يمكن عرض هذا القسم حاليًا.',
  },

  // One document
  documentTitle: { en: 'Document {reference}', ar: 'المستند {reference}' },
  backToOverview: { en: 'Back to the overview', ar: 'العودة إلى النظرة العامة' },
  fieldStatus: { en: 'Status', ar: 'الحالة' },
  fieldTitleAr: { en: 'Arabic title', ar: 'العنوان بالعربية' },
  fieldTitleEn: { en: 'English title', ar: 'العنوان بالإنجليزية' },
  fieldWorkflow: { en: 'Approval order', ar: 'ترتيب الاعتماد' },
  'workflow.sequential': { en: 'Sequential', ar: 'متسلسل' },
  'workflow.parallel': { en: 'Parallel', ar: 'متوازٍ' },
  fieldDepartment: { en: 'Department', ar: 'القسم' },
  fieldCreated: { en: 'Created', ar: 'تاريخ الإنشاء' },
  fieldSent: { en: 'Sent', ar: 'تاريخ الإرسال' },
  fieldExpires: { en: 'Approval deadline', ar: 'آخر موعد للاعتماد' },
  fieldCompleted: { en: 'Completed', ar: 'تاريخ الإنجاز' },
  fieldRejection: { en: 'Rejection reason', ar: 'سبب الرفض' },
  approversHeading: { en: 'Approvers', ar: 'المعتمدون' },
  noApprovers: { en: 'No approvers yet.', ar: 'لا يوجد معتمدون بعد.' },
  colOrder: { en: 'Order', ar: 'الترتيب' },
  colRole: { en: 'Role', ar: 'الدور' },
  colPhone: { en: 'Phone', ar: 'الهاتف' },
  colAction: { en: 'Action', ar: 'الإجراء' },
  colActedAt: { en: 'Acted at', ar: 'وقت الإجراء' },
  'action.sign': { en: 'Sign', ar: 'توقيع' },
  'action.stamp': { en: 'Stamp', ar: 'ختم' },
  'action.approve_only': { en: 'Approve', ar: 'اعتماد' },
  'action.review_only': { en: 'Review', ar: 'مراجعة' },
  'approver.waiting': { en: 'Waiting', ar: 'في الانتظار' },
  'approver.notified': { en: 'Notified', ar: 'تم إشعاره' },
  'approver.completed': { en: 'Done', ar: 'أنجز' },
  'approver.rejected': { en: 'Rejected', ar: 'رفض' },
  'approver.delegated': { en: 'Delegated', ar: 'فوّض' },
  delegatedTo: { en: 'delegated to {name}', ar: 'فوّض إلى {name}' },
  ccHeading: { en: 'Copies (cc)', ar: 'نسخ لعلم (cc)' },
  ccIntro: {
    en: 'These numbers receive the signed PDF on WhatsApp when the document is approved.',
    ar: 'تصل إلى هذه الأرقام نسخة من ملف PDF الموقّع عبر واتساب عند اعتماد المستند.',
  },
  noCc: {
    en: 'No copies: only the approvers receive the signed PDF.',
    ar: 'لا نسخ: يتلقى المعتمدون وحدهم ملف PDF الموقّع.',
  },
  colLanguage: { en: 'Language', ar: 'اللغة' },
  'ccLanguage.ar': { en: 'Arabic', ar: 'العربية' },
  'ccLanguage.en': { en: 'English', ar: 'الإنجليزية' },
  'ccLanguage.auto': { en: 'Automatic (by number)', ar: 'تلقائية (حسب الرقم)' },

  // Error pages
  'errorTitle.400': { en: 'Bad request', ar: 'طلب غير صالح' },
  'errorTitle.403': { en: 'Request refused', ar: 'تم رفض الطلب' },
  'errorTitle.404': { en: 'Not found', ar: 'غير موجود' },
  'errorTitle.405': { en: 'Not allowed', ar: 'غير مسموح' },
  'errorTitle.413': { en: 'Request too large', ar: 'الطلب كبير جدًا' },
  'errorTitle.500': { en: 'Something went wrong', ar: 'حدث خطأ ما' },
  errorBadRequest: { en: 'The request could not be understood.', ar: 'تعذّر فهم الطلب.' },
  errorCsrf: {
    en: 'This form has expired or did not come from this dashboard. Go back, reload the page and try again.',
    ar: 'انتهت صلاحية هذا النموذج أو لم يُرسل من لوحة التحكم هذه. ارجع وأعد تحميل الصفحة ثم حاول مرة أخرى.',
  },
  errorNotFound: {
    en: 'The page or item you asked for does not exist.',
    ar: 'الصفحة أو العنصر المطلوب غير موجود.',
  },
  errorMethod: {
    en: 'This address does not accept that kind of request.',
    ar: 'هذا العنوان لا يقبل هذا النوع من الطلبات.',
  },
  errorTooLarge: { en: 'The form you sent is too large.', ar: 'النموذج الذي أرسلته كبير جدًا.' },
  errorInternal: {
    en: 'An unexpected error occurred. Please try again; if it keeps happening, contact support and quote {requestId}.',
    ar: 'حدث خطأ غير متوقع. يُرجى المحاولة مرة أخرى؛ وإذا تكرر فتواصل مع الدعم واذكر الرمز {requestId}.',
  },
  // Embedding
  embedHeading: { en: 'Embedding the approval page', ar: 'تضمين صفحة الموافقة' },
  embedHint: {
    en: 'The https origins (one a line, at most 10) whose pages may show the approval page in a frame, for example https://app.example.com or https://*.example.com. Empty: no site may frame it.',
    ar: 'أصول https (واحد في كل سطر، 10 على الأكثر) التي يجوز لصفحاتها عرض صفحة الموافقة داخل إطار، مثل https://app.example.com أو https://*.example.com. فارغ: لا يجوز لأي موقع تأطيرها.',
  },
  embedLabel: { en: 'Allowed origins', ar: 'الأصول المسموح بها' },
  saveEmbed: { en: 'Save origins', ar: 'حفظ الأصول' },
  flashEmbedSaved: { en: 'The allowed origins were saved.', ar: 'تم حفظ الأصول المسموح بها.' },
  errorEmbedOrigin: { en: '“{origin}” is not an https origin.', ar: '«{origin}» ليس أصل https صالحًا.' },
  errorEmbedPublicSuffix: {
    en: '“{origin}” covers every site under {suffix}, a public suffix anyone can have a name under. Name your own domain, such as https://*.yourdomain.{suffix}.',
    ar: '«{origin}» يشمل كل موقع تحت {suffix}، وهو لاحقة عامة يمكن لأي أحد تسجيل اسم تحتها. اذكر نطاقك أنت، مثل https://*.yourdomain.{suffix}.',
  },
  errorEmbedTooMany: { en: 'At most {max} origins.', ar: '{max} أصول على الأكثر.' },
  // Account defaults
  defaultsHeading: { en: 'Defaults for new documents', ar: 'الإعدادات الافتراضية للمستندات الجديدة' },
  defaultsHint: {
    en: 'Documents sent without their own automatic reminders take these; approvers added without their own verification take this one. Leave the three reminder fields empty for the server default.',
    ar: 'تأخذ المستندات المرسلة دون تذكيرات تلقائية خاصة بها هذه القيم، ويأخذ المعتمدون المضافون دون طريقة تحقق خاصة بهم هذه الطريقة. اترك حقول التذكير الثلاثة فارغة لاستخدام الإعداد الافتراضي للخادم.',
  },
  remindersLegend: { en: 'Automatic reminders', ar: 'التذكيرات التلقائية' },
  remindFirstLabel: { en: 'First reminder after (hours)', ar: 'أول تذكير بعد (ساعات)' },
  remindEveryLabel: { en: 'Then every (hours)', ar: 'ثم كل (ساعات)' },
  remindMaxLabel: { en: 'At most (reminders; 0 for none)', ar: 'بحد أقصى (عدد التذكيرات؛ 0 لإيقافها)' },
  verificationLabel: { en: 'Approver verification', ar: 'التحقق من المعتمِد' },
  'verification.none': { en: 'None: the link is enough', ar: 'بدون تحقق: يكفي الرابط' },
  'verification.whatsapp_otp': {
    en: 'A one-time code sent over WhatsApp',
    ar: 'رمز لمرة واحدة يُرسل عبر واتساب',
  },
  saveDefaults: { en: 'Save defaults', ar: 'حفظ الإعدادات الافتراضية' },
  flashDefaultsSaved: { en: 'The defaults were saved.', ar: 'تم حفظ الإعدادات الافتراضية.' },
  errorRemindersAll: {
    en: 'Fill in all three reminder fields, or none of them.',
    ar: 'املأ حقول التذكير الثلاثة كلها أو اتركها كلها فارغة.',
  },
  errorWholeNumber: {
    en: 'Enter a whole number from {min} to {max}.',
    ar: 'أدخل عددًا صحيحًا من {min} إلى {max}.',
  },
  errorVerification: { en: 'Choose a verification method.', ar: 'اختر طريقة تحقق.' },
  goToOverview: { en: 'Go to the overview', ar: 'الذهاب إلى النظرة العامة' },
  goToLogin: { en: 'Go to sign in', ar: 'الذهاب إلى تسجيل الدخول' },
} as const satisfies Record<string, Record<Locale, string>>;

export type MessageKey = keyof typeof STRINGS;
export const MESSAGE_KEYS = Object.keys(STRINGS) as MessageKey[];
export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

export function isMessageKey(key: string): key is MessageKey {
  return Object.hasOwn(STRINGS, key);
}

export function translator(locale: Locale): Translate {
  return (key, params) => {
    const text: string = STRINGS[key][locale];
    if (!params) return text;
    return text.replace(/\{(\w+)\}/g, (whole, name: string) =>
      Object.hasOwn(params, name) ? String(params[name]) : whole,
    );
  };
}

/** The label for a value from another module's vocabulary (a status, an action), or the raw value itself. */
export function labelFor(t: Translate, prefix: string, value: string): string {
  const key = `${prefix}.${value}`;
  return isMessageKey(key) ? t(key) : value;
}

/** Dates as people read them in each language, always with their zone (UTC), Gregorian, Latin digits. */
const DATE_FORMATS: Record<Locale, Intl.DateTimeFormat> = {
  en: new Intl.DateTimeFormat('en-GB', {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: 'UTC',
  }),
  ar: new Intl.DateTimeFormat('ar-u-ca-gregory-nu-latn', {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: 'UTC',
  }),
};

export function formatDate(locale: Locale, date: Date): string {
  return `${DATE_FORMATS[locale].format(date)} UTC`;
}

export function formatNumber(locale: Locale, n: number): string {
  return n.toLocaleString(locale === 'ar' ? 'ar-u-nu-latn' : 'en-GB');
}
