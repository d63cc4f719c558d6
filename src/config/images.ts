import { z } from 'zod';
import { defineSlice } from './slice.ts';

export interface ImagesConfig {
  images: {
    /** Largest width and height of a signature or stamp image, checked at upload and again when decoding. */
    maxSidePx: number;
  };
}

export const imagesSlice = defineSlice({
  title: 'Approver images',
  about: 'Signature and stamp PNGs from the approval page.',
  env: {
    MAX_IMAGE_SIDE_PX: z.coerce
      .number()
      .int()
      .min(16)
      .max(8192)
      .default(4096)
      .describe('the largest width and height in pixels (16-8192); checked at upload and in the final PDF'),
  },
  build: (e): ImagesConfig => ({ images: { maxSidePx: e.MAX_IMAGE_SIDE_PX } }),
});
