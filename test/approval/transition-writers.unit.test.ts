import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');
// The frozen approval workflow of the runs started before worker versioning calls activities; it writes nothing.
const LEGACY = path.join(SRC, 'features/approval/workflow/legacy');

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .filter((file) => !file.startsWith(LEGACY));
}

/** Every `documentsStore(…).transition(id, from, to)` in src: the move it writes (`from -> to`) and where. */
async function transitionWriters(): Promise<{ move: string; file: string }[]> {
  const found: { move: string; file: string }[] = [];
  for (const file of await sources(SRC)) {
    const text = await readFile(file, 'utf8');
    if (!text.includes('.transition(')) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === 'transition' &&
        node.arguments.length >= 3
      ) {
        const [, from, to] = node.arguments;
        found.push({ move: `${from!.getText()} -> ${to!.getText()}`, file: path.relative(SRC, file) });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe('the writers of a document’s status moves', () => {
  it('each move is written in one place', async () => {
    const writers = await transitionWriters();
    expect(writers.length).toBeGreaterThan(5);
    const files = new Map<string, Set<string>>();
    for (const { move, file } of writers) files.set(move, (files.get(move) ?? new Set()).add(file));
    for (const [move, where] of files) {
      const calls = writers.filter((w) => w.move === move).length;
      expect(calls, `${move} in ${[...where].join(', ')}`).toBe(1);
    }
  });

  it('draft -> pending is written by markPending alone, which the send and the workflow both call', async () => {
    const pending = (await transitionWriters()).filter((w) => /-> 'pending'$/.test(w.move));
    expect(pending).toEqual([{ move: "['draft'] -> 'pending'", file: 'features/approval/mark-pending.ts' }]);
    for (const caller of ['features/approval/send-document.ts', 'features/approval/activities/events.ts'])
      expect(await readFile(path.join(SRC, caller), 'utf8')).toMatch(/\bmarkPending\(/);
  });
});
