-- What an endpoint answered to a delivery: the first 2 KiB of its response's body
-- (null when it gave none), for the staff's delivery log.
ALTER TABLE webhook_deliveries ADD COLUMN response_body TEXT;
