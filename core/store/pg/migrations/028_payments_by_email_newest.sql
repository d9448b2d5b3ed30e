-- Decision 247. The payer history (GET /api/user/v1/transactions) is paged, newest first. Its index now
-- holds each agency's payments of an address in that order, so a page is read from the index range, not
-- from every payment of the address sorted first.
DROP INDEX payments_by_email;
CREATE INDEX payments_by_email ON payments (email, agency_code, created_at DESC, order_no);
