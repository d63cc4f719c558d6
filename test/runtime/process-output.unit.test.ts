import { describe, expect, it } from 'vitest';
import { outputTail } from '../helpers/processes.ts';

describe("a child process's output in a test's error", () => {
  it('keeps the start of a fatal line whose stack trace would have filled the tail, and the lines after it', () => {
    const fatal = `{"level":"fatal","msg":"Unable to start server","error":"listen tcp 127.0.0.1:7233: bind: address already in use","stacktrace":"${'go.uber.org/dig.paramSingle.Build\\n\\t/root/go/pkg/mod/go.uber.org/dig@v1.18.0/param.go:288\\n'.repeat(200)}"}`;
    const tail = outputTail(`starting\n${fatal}\nexit status 1`);
    expect(tail).toContain('"error":"listen tcp 127.0.0.1:7233: bind: address already in use"');
    expect(tail).toContain(`… (${fatal.length} characters)`);
    expect(tail.endsWith('exit status 1')).toBe(true);
    expect(tail.startsWith('starting\n')).toBe(true);
  });

  it('gives short output whole and long output its last characters', () => {
    expect(outputTail('a\nb')).toBe('a\nb');
    const many = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join('\n');
    expect(outputTail(many, 100)).toBe(many.slice(-100));
  });
});
