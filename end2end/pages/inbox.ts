import { expect, type Page } from '@playwright/test';
import { waitForAdminHydration } from './admin';

export class InboxPage {
  constructor(readonly page: Page) {}

  async open() {
    await this.page.goto('/admin/inbox');
    await expect(this.page.getByRole('heading', { name: 'Inbox' })).toBeVisible();
    await expect(this.page.getByTestId('inbox')).toBeVisible();
    await waitForAdminHydration(this.page);
  }

  async search(text: string) {
    await this.page.getByLabel('Search name, email and message').fill(text);
    await this.page.getByRole('button', { name: 'Search', exact: true }).click();
  }

  rows() {
    return this.page.getByTestId('inquiry-row');
  }

  total() {
    return this.page.getByTestId('count-total');
  }

  async exportCsv(): Promise<string> {
    const [download] = await Promise.all([this.page.waitForEvent('download'), this.page.getByTestId('export').click()]);
    const path = await download.path();
    const fs = await import('node:fs/promises');
    return fs.readFile(path!, 'utf8');
  }
}
