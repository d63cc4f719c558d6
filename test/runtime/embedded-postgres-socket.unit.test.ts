import { describe, expect, it } from 'vitest';
import { socketDirectory } from '../../src/runtime/embedded-postgres.ts';

describe('socketDirectory', () => {
  it("is the data folder's parent", () => {
    expect(socketDirectory('/var/lib/wathiq/postgres/pgdata', 5433, 'linux')).toBe(
      '/var/lib/wathiq/postgres',
    );
  });

  it('is none on Windows, for a path past the socket limit, and for a folder the server would misread', () => {
    expect(socketDirectory('C:\\wathiq\\postgres\\pgdata', 5433, 'win32')).toBeUndefined();
    // 103 bytes for the whole socket path: the folder, "/" and ".s.PGSQL.5433".
    const fits = `/${'a'.repeat(103 - 1 - '/.s.PGSQL.5433'.length)}`;
    expect(socketDirectory(`${fits}/pgdata`, 5433, 'linux')).toBe(fits);
    expect(socketDirectory(`${fits}b/pgdata`, 5433, 'linux')).toBeUndefined();
    // Multi-byte names count in bytes, as the kernel does.
    expect(socketDirectory(`/${'é'.repeat(50)}/pgdata`, 5433, 'linux')).toBeUndefined();
    for (const odd of ['/a b', "/a'b", '/a"b', '/a,b', '/a\\b'])
      expect(socketDirectory(`${odd}/pgdata`, 5433, 'linux')).toBeUndefined();
  });
});
