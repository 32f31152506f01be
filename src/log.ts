// Structured JSON logs (pino). Nothing here ever receives a token: callers log a prefix.

import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, name = 'jumpgate'): Logger {
  return pino({ name, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}

/** A logger that drops everything (tests, embedded use). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
