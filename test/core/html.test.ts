import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeHtml, html, SafeHtml } from '../../core/html.ts';

test('escapeHtml escapes the five special characters and gives other text back as it is', () => {
  assert.equal(
    escapeHtml(`<a href="x">Tom & 'Jerry'</a>`),
    '&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;',
  );
  assert.equal(escapeHtml('Lembaga Zakat Selangor, RM 10.00'), 'Lembaga Zakat Selangor, RM 10.00');
  assert.equal(escapeHtml(''), '');
});

test('html escapes every interpolated value, nested lists included, and keeps SafeHtml and its own markup', () => {
  const rows: Parameters<typeof html>[1][] = [
    '<b>',
    'plain',
    7,
    null,
    undefined,
    false,
    [`"q"`, html`<i>${'&'}</i>`],
  ];
  // prettier-ignore
  const page = html`<ul>${rows.map((r) => html`<li>${r}</li>`)}</ul>${new SafeHtml('<br />')}${0}`;
  assert.equal(
    page.value,
    '<ul><li>&lt;b&gt;</li><li>plain</li><li>7</li><li></li><li></li><li></li>' +
      '<li>&quot;q&quot;<i>&amp;</i></li></ul><br />0',
  );
});
