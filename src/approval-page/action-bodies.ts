import { z } from 'zod';
import type { PageLink } from '../features/approval/act-from-page.ts';
import type { ActionEvidence } from '../features/approval/definitions.ts';
import { normalizePhone } from '../features/documents/phone.ts';
import { hasBidiControl } from '../domain/bidi.ts';
import { LIMITS } from '../domain/model.ts';
import { addDetail, AppError, newDetails } from '../errors.ts';
import type { AppContext } from '../http/context.ts';
import { parseJson, readRawBody } from '../http/raw-body.ts';
import { parseBody } from '../http/validation.ts';
import type { PngLimits } from '../images/png.ts';
import { readImageField } from './images.ts';
import type { PageStrings } from './strings.ts';

const MAX_BODY = 4 * 1024 * 1024;

const CompleteBody = z.object({
  signature_png: z.string().optional(),
  typed_name: z.string().trim().min(1).max(255).optional(),
  stamp_png: z.string().optional(),
  generated_seal: z.boolean().optional(),
});
const RejectBody = z.object({ reason: z.string().trim().max(1000).optional() });
const CodeBody = z.object({ code: z.string().trim().max(16) });
const DelegateBody = z.object({ name: z.unknown(), phone: z.unknown(), reason: z.unknown() });
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f]/;

const readJson = async (ctx: AppContext): Promise<unknown> => parseJson(await readRawBody(ctx.req, MAX_BODY));

/** The code an approver typed, as `POST /a/{token}/code/verify` takes it. */
export async function readCode(ctx: AppContext): Promise<string> {
  return parseBody(CodeBody, await readJson(ctx)).code;
}

/**
 * What completing adds to the evidence, by the approver's action: a drawn signature or a typed name to sign, an
 * uploaded stamp or the generated seal to stamp. Image problems are the approver's to fix, so they are told in the
 * page's language.
 */
export async function readCompletion(
  ctx: AppContext,
  link: PageLink,
  input: { strings: PageStrings; limits: PngLimits },
): Promise<{ image?: Buffer; typedName?: string; generatedSeal?: true }> {
  const body = parseBody(CompleteBody, await readJson(ctx));
  if (body.typed_name !== undefined && hasBidiControl(body.typed_name))
    throw AppError.validation({ typed_name: [input.strings.errors.bidiControls] });
  if (link.approver.actionType === 'sign') {
    if (body.signature_png !== undefined)
      return { image: await readImageField('signature_png', body.signature_png, input) };
    if (body.typed_name) return { typedName: body.typed_name };
    throw AppError.validation({
      signature_png: ['Draw a signature (signature_png) or type your name (typed_name)'],
    });
  }
  if (link.approver.actionType === 'stamp') {
    if (body.stamp_png !== undefined)
      return { image: await readImageField('stamp_png', body.stamp_png, input) };
    if (body.generated_seal === true) return { generatedSeal: true };
    throw AppError.validation({
      stamp_png: ['Upload a stamp image (stamp_png) or choose the generated seal (generated_seal: true)'],
    });
  }
  return {};
}

/** The rejection's reason, if given. */
export async function readRejection(
  ctx: AppContext,
  strings: PageStrings,
): Promise<Pick<ActionEvidence, 'reason'>> {
  const { reason } = parseBody(RejectBody, await readJson(ctx));
  if (reason !== undefined && hasBidiControl(reason))
    throw AppError.validation({ reason: [strings.errors.bidiControls] });
  return reason ? { reason } : {};
}

/** `{name, phone, reason}` of a delegation, each refusal worded in the page's language. */
export async function readDelegation(
  ctx: AppContext,
  strings: PageStrings,
): Promise<{ name: string; phone: string; reason: string }> {
  const t = strings.delegate;
  const body = parseBody(DelegateBody, await readJson(ctx));
  const details = newDetails();
  const name = typeof body.name === 'string' ? body.name.trim() : '';
  if (name === '' || name.length > LIMITS.textMax || CONTROL.test(name))
    addDetail(details, 'name', t.needName);
  else if (hasBidiControl(name)) addDetail(details, 'name', strings.errors.bidiControls);
  const phone = typeof body.phone === 'string' ? normalizePhone(body.phone) : undefined;
  if (!phone?.ok) addDetail(details, 'phone', t.badPhone);
  const reason = typeof body.reason === 'string' ? body.reason.trim() : '';
  if (reason === '' || CONTROL_BUT_LINES.test(reason)) addDetail(details, 'reason', t.needReason);
  else if (hasBidiControl(reason)) addDetail(details, 'reason', strings.errors.bidiControls);
  else if (reason.length > LIMITS.delegationReasonMax)
    addDetail(details, 'reason', t.reasonTooLong(LIMITS.delegationReasonMax));
  if (Object.keys(details).length > 0 || !phone?.ok) throw AppError.validation(details);
  return { name, phone: phone.phone, reason };
}
