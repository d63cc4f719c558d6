#!/usr/bin/env node
// The operator's CLI (`npx wathiq …`): src/cli.ts, compiled from the current sources or run under tsx, exactly as
// `npm start` runs the service (scripts/start.mjs).
import { runSources } from '../scripts/start.mjs';

await runSources('cli');
