-- QR codes (issue 6): the generators' PNG URLs, and the extras a signed pay link carries into its order.

-- One row per generated QR code. token: the unguessable part of its PNG URL (128 random bits, base64url).
-- kind: pay-url (a signed pay link) or duitnow (an EMVCo payload); content: exactly what the QR encodes.
-- The PNG is rendered from content on each request (and cached by clients); after expires_at it is 410.
CREATE TABLE qr_codes (
  token        TEXT PRIMARY KEY,
  agency_code  TEXT NOT NULL REFERENCES agencies (code),
  kind         TEXT NOT NULL CHECK (kind IN ('pay-url', 'duitnow')),
  content      TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  expires_at   TEXT NOT NULL
) STRICT;

-- The extras of the signed pay link an order was opened from, as a JSON object ({} when it had none);
-- NULL for checkout orders and unsigned pay links. Only a verified signature puts anything here.
ALTER TABLE payments ADD COLUMN extras TEXT;
