/**
 * One headless Chromium (Debian's, driven by playwright-core) per test file: launched by the first test that
 * needs it and closed after the last. When /usr/bin/chromium is missing the tests fail, saying so (CI
 * installs it).
 */
import { after } from 'node:test';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
let launched: Promise<Browser> | undefined;

export function browser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}: the browser tests need it (apt-get install chromium).`,
    );
  }
  launched ??= chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
  return launched;
}

after(async () => {
  if (launched) await (await launched).close();
});
