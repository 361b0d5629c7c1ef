import { describe, expect, it } from 'vitest';
import { chooseLogFormat } from '../../src/logging/log-format.js';

describe('chooseLogFormat', () => {
  it.each([
    [{ logFormat: undefined, logLevel: 'info' }, true, 'pretty'],
    [{ logFormat: undefined, logLevel: 'debug' }, true, 'pretty'],
    [{ logFormat: undefined, logLevel: 'info' }, false, 'json'],
    [{ logFormat: undefined, logLevel: 'silent' }, true, 'json'],
    [{ logFormat: 'json', logLevel: 'info' }, true, 'json'],
    [{ logFormat: 'pretty', logLevel: 'info' }, false, 'pretty'],
  ] as const)('%j with a terminal: %s → %s', (config, stdoutIsTerminal, format) => {
    expect(chooseLogFormat(config, stdoutIsTerminal)).toBe(format);
  });
});
