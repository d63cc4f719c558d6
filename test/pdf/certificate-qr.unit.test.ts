import { PDFDocument } from 'pdf-lib';
import QRCode from 'qrcode';
import { describe, expect, it, vi } from 'vitest';
import { layoutCertificate } from '../../src/pdf/compose/certificate.ts';
import { loadFontSet } from '../../src/pdf/text/fonts.ts';
import { PdfFonts } from '../../src/pdf/text/pdf-fonts.ts';
import { sampleApprovers, sampleDocument } from '../helpers/sample-input.ts';

describe('certificate verification band', () => {
  it('encodes the QR code of the verification URL once, and draws it', async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const typesetter = { fontSet: await loadFontSet(), pdfFonts: new PdfFonts(doc.context) };
    const create = vi.spyOn(QRCode, 'create');
    try {
      const certificate = layoutCertificate(typesetter, {
        document: {
          ...sampleDocument(Buffer.from('x')),
          verificationUrl: 'https://wathiq.example.sa/v/Xk9q',
        },
        approvers: sampleApprovers(2),
        originalPageCount: 1,
      });
      expect(create).toHaveBeenCalledTimes(1);
      expect(certificate.canvases[0]!.content()).toContain('/WathiqQR BMC');
    } finally {
      create.mockRestore();
    }
  });
});
