export type FormValue = string | number | undefined;

/**
 * A multipart body as a client would send it: plain fields, `approvers[N][field]` parts, and the file.
 * Undefined values are left out.
 */
export function documentForm(
  fields: Record<string, FormValue>,
  options: { approvers?: Record<string, FormValue>[]; file?: Uint8Array; filename?: string } = {},
): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields))
    if (value !== undefined) form.append(name, String(value));
  options.approvers?.forEach((approver, i) => {
    for (const [name, value] of Object.entries(approver))
      if (value !== undefined) form.append(`approvers[${i}][${name}]`, String(value));
  });
  if (options.file) {
    form.append(
      'file',
      new Blob([options.file], { type: 'application/pdf' }),
      options.filename ?? 'contract.pdf',
    );
  }
  return form;
}
