import { expect, type Locator, type Page } from '@playwright/test';

/** The public contact form on the home page. */
export class ContactPage {
  readonly form: Locator;
  readonly name: Locator;
  readonly email: Locator;
  readonly message: Locator;
  readonly send: Locator;
  readonly success: Locator;
  readonly error: Locator;
  readonly counter: Locator;

  constructor(readonly page: Page) {
    this.form = page.locator('#contact form');
    // By id, not by label: the page object works in both languages (the labels and their
    // association are checked by the language and accessibility tests).
    this.name = page.locator('#contact-name');
    this.email = page.locator('#contact-email');
    this.message = page.locator('#contact-message');
    this.send = this.form.locator('button[type="submit"]');
    this.success = page.getByTestId('contact-success');
    this.error = page.getByTestId('contact-error');
    this.counter = page.getByTestId('message-count');
  }

  async open() {
    await this.page.goto('/');
  }

  /**
   * Uses the page as a visitor would (the pointer moves over its heading) and waits until the wasm
   * client has hydrated the form: the home page fetches its client on the first pointer, touch,
   * key or focus (app/src/hydrate_on_first_use.js).
   */
  async waitForHydration() {
    await this.page.mouse.move(0, 0);
    await this.page.getByRole('heading', { level: 1 }).hover();
    await expect(this.form).toHaveAttribute('data-hydrated', 'true');
  }

  async fill(fields: { name: string; email: string; message: string }) {
    await this.name.fill(fields.name);
    await this.email.fill(fields.email);
    await this.message.fill(fields.message);
  }

  fieldError(field: 'name' | 'email' | 'message'): Locator {
    return this.page.locator(`#contact-${field}-error`);
  }
}

/** Unique data per test, so tests never depend on each other. */
export function uniqueInquiry(tag: string) {
  const id = `${tag}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  return { name: `Tester ${id}`, email: `qa+${id}@example.org`, message: `Hello from ${id}.\nSecond line.` };
}
