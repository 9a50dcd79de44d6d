// Debian's Chromium, never a downloaded one (`npx playwright install` fails on this
// network), with the flags that keep it from calling hosts the network refuses. Both
// Playwright configurations (playwright.config.ts, dev-loop/) launch it so.
export const chromiumLaunch = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
};
