import { expect, type Page } from '@playwright/test';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { waitForAdminHydration } from './admin';

/** The admin's /admin/shares page. */
export class SharesPage {
  constructor(readonly page: Page) {}

  async open() {
    await this.page.goto('/admin/shares');
    await expect(this.page.getByRole('heading', { name: 'Shares', exact: true })).toBeVisible();
    await waitForAdminHydration(this.page);
    await expect(this.page.getByTestId('upload-form')).toHaveAttribute('data-hydrated', 'true');
  }

  /** Uploads a file and returns the link shown once. */
  async share(file: { name: string; mimeType: string; buffer: Buffer }, expiry = '1 day', note = ''): Promise<string> {
    await this.page.getByLabel('File', { exact: true }).setInputFiles(file);
    await this.page.getByLabel('Link expires after').selectOption({ label: expiry });
    if (note) await this.page.getByLabel(/Note for yourself/).fill(note);
    await this.page.getByRole('button', { name: 'Upload and create link' }).click();
    const created = this.page.getByTestId('share-created');
    await expect(created).toBeVisible({ timeout: 30_000 });
    return await this.page.getByTestId('share-url').inputValue();
  }

  /** Reads the QR code shown beside the new link, as a phone's camera would: from its pixels. */
  async qrCodeText(): Promise<string | null> {
    const qr = this.page.getByTestId('share-qr');
    await expect(qr).toBeVisible();
    const png = PNG.sync.read(await qr.screenshot());
    return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data ?? null;
  }

  rows() {
    return this.page.getByTestId('share-row');
  }

  row(fileName: string) {
    return this.rows().filter({ hasText: fileName });
  }
}

/** The recipient's page /s/{token}. */
export class ShareLandingPage {
  constructor(readonly page: Page) {}

  /**
   * The download works without JavaScript; the "download started" note needs the hydrated page.
   * Like the home page, the share page fetches its client on the visitor's first pointer, touch,
   * key or focus (app/src/hydrate_on_first_use.js): the pointer moves over its heading first.
   */
  async waitForHydration() {
    await this.page.mouse.move(0, 0);
    await this.page.getByRole('heading', { level: 1 }).hover();
    await expect(this.page.locator('.page[data-hydrated]')).toHaveAttribute('data-hydrated', 'true');
  }

  download() {
    return this.page.getByTestId('download');
  }
}
