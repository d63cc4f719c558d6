/** The dashboard's strings for two-step sign-in (TOTP), in both languages; part of the table in `i18n.ts`. */
export const SECOND_FACTOR_STRINGS = {
  navSecurity: { en: 'Security', ar: 'الأمان' },
  codeTitle: { en: 'Two-step sign-in', ar: 'التحقق بخطوتين' },
  codeIntro: {
    en: 'Enter the 6-digit code from your authenticator app, or one of your recovery codes.',
    ar: 'أدخل الرمز المكوّن من 6 أرقام من تطبيق المصادقة، أو أحد رموز الاسترداد.',
  },
  codeLabel: { en: 'Code', ar: 'الرمز' },
  codeHint: {
    en: 'A recovery code looks like ABCD-EFGH-JKLM-NPQR; each one works once.',
    ar: 'يبدو رمز الاسترداد هكذا ABCD-EFGH-JKLM-NPQR، ويصلح كل رمز مرة واحدة.',
  },
  verifyCode: { en: 'Verify', ar: 'تحقّق' },
  codeMissing: { en: 'Enter the code.', ar: 'أدخل الرمز.' },
  codeWrong: {
    en: 'That code is not right. Check the code in your app and try again.',
    ar: 'الرمز غير صحيح. تحقّق من الرمز في تطبيقك وحاول مرة أخرى.',
  },
  codeReplayed: {
    en: 'That code has already been used. Wait for the next code in your app.',
    ar: 'سبق استخدام هذا الرمز. انتظر الرمز التالي في تطبيقك.',
  },
  codeStartOver: { en: 'Sign in again with your password', ar: 'سجّل الدخول من جديد بكلمة المرور' },
  flashCodeExpired: {
    en: 'The sign-in took too long. Enter your email and password again.',
    ar: 'استغرق تسجيل الدخول وقتًا طويلًا. أدخل بريدك الإلكتروني وكلمة المرور مرة أخرى.',
  },
  securityTitle: { en: 'Two-step sign-in', ar: 'التحقق بخطوتين' },
  securityIntro: {
    en: 'With two-step sign-in on, signing in to this dashboard needs your password and a code from an authenticator app on your phone (Google Authenticator, Microsoft Authenticator, 1Password and the like).',
    ar: 'عند تفعيل التحقق بخطوتين يحتاج الدخول إلى لوحة التحكم إلى كلمة المرور وإلى رمز من تطبيق مصادقة على هاتفك (مثل Google Authenticator أو Microsoft Authenticator أو 1Password).',
  },
  securityOff: { en: 'Two-step sign-in is off.', ar: 'التحقق بخطوتين غير مفعّل.' },
  securityStart: { en: 'Set up two-step sign-in', ar: 'إعداد التحقق بخطوتين' },
  securityPending: {
    en: 'Not on yet: it takes effect once you confirm it with a code from your app.',
    ar: 'لم يُفعَّل بعد: يسري بعد أن تؤكده برمز من تطبيقك.',
  },
  stepScan: {
    en: '1. Scan this QR code with your authenticator app.',
    ar: '1. امسح رمز QR هذا بتطبيق المصادقة.',
  },
  qrLabel: { en: 'QR code for your authenticator app', ar: 'رمز QR لتطبيق المصادقة' },
  stepKey: {
    en: '2. Or, if you cannot scan, type this key into the app:',
    ar: '2. أو إن تعذّر المسح فاكتب هذا المفتاح في التطبيق:',
  },
  setupKey: { en: 'Setup key', ar: 'مفتاح الإعداد' },
  stepConfirm: {
    en: '3. Enter the 6-digit code the app now shows.',
    ar: '3. أدخل الرمز المكوّن من 6 أرقام الذي يعرضه التطبيق الآن.',
  },
  turnOn: { en: 'Turn on', ar: 'تفعيل' },
  startAgain: { en: 'Start again with a new key', ar: 'البدء من جديد بمفتاح جديد' },
  securityOnSince: { en: 'On since', ar: 'مفعّل منذ' },
  recoveryLeft: { en: 'Unused recovery codes', ar: 'رموز الاسترداد غير المستخدمة' },
  recoveryHeading: { en: 'Your recovery codes', ar: 'رموز الاسترداد الخاصة بك' },
  recoveryOnce: {
    en: 'Two-step sign-in is on. Save these recovery codes now: they are shown only this once and stored only as hashes. If you lose your phone, each one signs you in once.',
    ar: 'تم تفعيل التحقق بخطوتين. احفظ رموز الاسترداد هذه الآن: لن تُعرض إلا هذه المرة ولا تُحفظ إلا مجزّأة. إذا فقدت هاتفك فكل رمز منها يُدخلك مرة واحدة.',
  },
  recoveryCodesLabel: { en: 'Recovery codes', ar: 'رموز الاسترداد' },
  recoveryDone: { en: 'I have saved them', ar: 'حفظتها' },
  disableHeading: { en: 'Turn off two-step sign-in', ar: 'إيقاف التحقق بخطوتين' },
  disableHint: {
    en: 'Give a current code from your app (or a recovery code), or your password.',
    ar: 'أدخل رمزًا حاليًا من تطبيقك (أو رمز استرداد)، أو كلمة المرور.',
  },
  disableCodeLabel: { en: 'Current code', ar: 'الرمز الحالي' },
  disablePasswordLabel: { en: 'Or your password', ar: 'أو كلمة المرور' },
  turnOff: { en: 'Turn off', ar: 'إيقاف' },
  disableMissing: {
    en: 'Enter a current code or your password.',
    ar: 'أدخل رمزًا حاليًا أو كلمة المرور.',
  },
  passwordWrong: { en: 'The password is incorrect.', ar: 'كلمة المرور غير صحيحة.' },
  flashSecondFactorOff: {
    en: 'Two-step sign-in is off: signing in asks only for your password.',
    ar: 'تم إيقاف التحقق بخطوتين: يطلب الدخول كلمة المرور فقط.',
  },
} as const satisfies Record<string, Record<'en' | 'ar', string>>;
