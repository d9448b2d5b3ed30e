-- Decision 237. The order index of callbacks holds no column a delivery changes. With the state in it,
-- every delivered callback moved its entry, on a page of its own (order numbers are random), and each
-- commit of a wave of deliveries wrote one page per callback more: half of what a delivery wrote to the
-- log. Superseding an order's queued callbacks, its history and the lease's check of its older callbacks
-- read the order's few rows by (order_no, id) as well.
DROP INDEX callbacks_by_order;
CREATE INDEX callbacks_by_order ON callbacks (order_no, id);
