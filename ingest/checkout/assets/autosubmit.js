// Sends the payer's browser on to the merchant: the form posts the indirect callback (spec 6), after the
// payer has had a few seconds (data-delay) to read the result. Its visible button posts at once; without
// scripts, the button is the only way, and the note below it says so.
const form = document.getElementById('callback-form');
if (form) {
  const note = document.getElementById('return-note');
  if (note?.dataset.js) note.textContent = note.dataset.js;
  const seconds = Number(form.dataset.delay ?? '0');
  setTimeout(() => form.submit(), Math.max(0, seconds) * 1000);
}
