// Sends the payer's browser on to the merchant: the form posts the indirect callback (spec 6). Without
// scripts, the form's visible button does the same.
document.getElementById('callback-form')?.submit();
