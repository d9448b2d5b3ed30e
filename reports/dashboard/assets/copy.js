// The copy buttons of the dashboard: copies the text of the element a button names (data-copy="id").
// A file of our own (no inline script), so the page's Content-Security-Policy stays script-src 'self'.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy') || '');
  if (!source) return;
  const text = 'value' in source ? source.value : source.textContent || '';
  const done = (message) => {
    const status = document.getElementById(button.getAttribute('data-status') || '');
    if (status) status.textContent = message;
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(
      () => done('Copied.'),
      () => done('Could not copy: select the text and copy it yourself.'),
    );
  } else {
    if ('select' in source) source.select();
    done(document.execCommand('copy') ? 'Copied.' : 'Select the text and copy it yourself.');
  }
});
