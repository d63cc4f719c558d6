import { runCli } from './cli/run.ts';

// The operator's CLI: `npx wathiq <command>` (bin/wathiq.mjs), or `npm run cli -- <command>`. Commands and their
// help are in src/cli/; docs/operations.md describes them.
const io = {
  out: (text: string) => void process.stdout.write(text),
  err: (text: string) => void process.stderr.write(text),
};

runCli(process.argv.slice(2), io, process.env).then(
  (code) => {
    // Exits once what was written has drained: a piped stdout may still hold the result.
    process.exitCode = code;
    process.stdout.write('', () => process.exit(code));
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
