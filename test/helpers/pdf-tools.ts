import { execFile, execFileSync, spawnSync } from 'node:child_process';

/** What poppler's pdfsig says about each signature (its exit code is 0 even when a digest does not match). */
export interface PdfsigSignature {
  valid: boolean;
  total: boolean;
  trusted: boolean;
  text: string;
}

export function pdfsig(file: string, nssDir?: string): { signatures: PdfsigSignature[]; output: string } {
  const args = nssDir ? ['-nssdir', `sql:${nssDir}`, file] : [file];
  const r = spawnSync('pdfsig', args, { encoding: 'utf8' });
  return parsePdfsig(`${r.stdout}${r.stderr}`);
}

/**
 * `pdfsig` without blocking this process: for certificates whose OCSP responder this process serves (NSS checks
 * OCSP online, and a synchronous call would leave the responder unable to answer).
 */
export async function pdfsigAsync(
  file: string,
  nssDir?: string,
): Promise<{ signatures: PdfsigSignature[]; output: string }> {
  const args = nssDir ? ['-nssdir', `sql:${nssDir}`, file] : [file];
  const output = await new Promise<string>((resolve) => {
    execFile('pdfsig', args, { encoding: 'utf8' }, (_err, stdout, stderr) => resolve(`${stdout}${stderr}`));
  });
  return parsePdfsig(output);
}

function parsePdfsig(output: string): { signatures: PdfsigSignature[]; output: string } {
  const parts = output.split(/^Signature #\d+:$/m).slice(1);
  return {
    output,
    signatures: parts.map((text) => ({
      valid: text.includes('Signature Validation: Signature is Valid.'),
      total: /^\s*- Total document signed$/m.test(text),
      trusted: text.includes('Certificate Validation: Certificate is Trusted.'),
      text,
    })),
  };
}

export function qpdfCheck(file: string): { clean: boolean; output: string } {
  const r = spawnSync('qpdf', ['--check', file], { encoding: 'utf8' });
  const output = `${r.stdout}${r.stderr}`;
  return {
    clean:
      r.status === 0 &&
      !/WARNING|error/i.test(output.replace(/No syntax or stream encoding errors found.*/s, '')),
    output,
  };
}

export function pageCount(file: string): number {
  const info = execFileSync('pdfinfo', [file], { encoding: 'utf8' });
  return Number(/^Pages:\s+(\d+)/m.exec(info)?.[1]);
}

/** Text of one page; bidi embedding marks that pdftotext adds are removed. */
export function pageText(file: string, page: number): string {
  const text = execFileSync('pdftotext', ['-f', String(page), '-l', String(page), file, '-'], {
    encoding: 'utf8',
  });
  return text.replace(/[\u200e\u200f\u202a-\u202e]/g, '');
}

export function renderPage(file: string, page: number, outPrefix: string, dpi = 110): void {
  execFileSync('pdftoppm', [
    '-f',
    String(page),
    '-l',
    String(page),
    '-r',
    String(dpi),
    '-png',
    '-singlefile',
    file,
    outPrefix,
  ]);
}
