import { AppError } from '../../errors.ts';
import { expectedTemplates } from '../../whatsapp/template-catalog.ts';
import { checkTemplates, listGraphTemplates } from '../../whatsapp/template-check.ts';
import { printResult, table, type CliCommand } from '../command.ts';

export const whatsappCommands: CliCommand[] = [
  {
    words: ['whatsapp', 'templates', 'check'],
    synopsis: '[--json]',
    summary: "Which of Wathiq's message templates are missing or differ in the WhatsApp Business account",
    details: `Lists the account's templates (GET /{WHATSAPP_BUSINESS_ACCOUNT_ID}/message_templates on WHATSAPP_API_URL,
with WHATSAPP_ACCESS_TOKEN; pages counted on stderr) and compares each template Wathiq sends (WHATSAPP_TEMPLATE_*,
in both languages) with its body, header and buttons. Exits 1 when any is missing, differs or is not APPROVED.`,
    options: {},
    positionals: { min: 0, max: 0 },
    async run(ctx) {
      const config = ctx.config();
      const { whatsapp } = config;
      const missing = [
        !whatsapp.businessAccountId && 'WHATSAPP_BUSINESS_ACCOUNT_ID',
        !whatsapp.accessToken && 'WHATSAPP_ACCESS_TOKEN',
      ].filter(Boolean);
      if (missing.length > 0) {
        throw new AppError('bad_request', `Set ${missing.join(' and ')} to read the account's templates`);
      }
      const listed = await listGraphTemplates(
        {
          apiUrl: whatsapp.apiUrl,
          accessToken: whatsapp.accessToken!,
          businessAccountId: whatsapp.businessAccountId!,
          timeoutMs: whatsapp.timeoutMs,
        },
        (page) => ctx.io.err(`page ${page.number}: ${page.templates} templates so far\n`),
      );
      const findings = checkTemplates(expectedTemplates(whatsapp.templates, config.otp.template), listed);
      const bad = findings.filter((f) => f.verdict !== 'ok');
      printResult(
        ctx,
        () =>
          [
            table(
              ['VERDICT', 'LANGUAGE', 'TEMPLATE', 'PROBLEMS'],
              findings.map((f) => [f.verdict, f.language, f.name, f.problems.join('; ')]),
            ),
            '',
            bad.length === 0
              ? `All ${findings.length} templates are registered as Wathiq sends them.`
              : `${bad.length} of ${findings.length} templates need attention in WhatsApp Manager.`,
          ].join('\n'),
        {
          listed: listed.length,
          ok: findings.length - bad.length,
          problems: bad.length,
          templates: findings,
        },
      );
      return bad.length === 0 ? 0 : 1;
    },
  },
];
