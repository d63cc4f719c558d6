import { ConfigError, loadConfig, type ConfigRole } from '../../src/config.ts';

/** The issues loadConfig refuses `env` with, by variable; none when it loads. */
export function configIssues(env: Record<string, string | undefined>, role?: ConfigRole): string[] {
  try {
    loadConfig(env, { role });
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  return [];
}
