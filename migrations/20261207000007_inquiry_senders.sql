-- Issue 56: contact publishes each inquiry's sender address, lowercased as holds and data requests
-- compare addresses (`lower(email collate ucs_basic)`), so holds can tie a hold on one inquiry to
-- the person it concerns without naming contact's table. A plain view: the planner inlines it and
-- inquiries_email_ascii_idx serves `sender = $1`.
create view inquiry_senders as select id, lower(email collate ucs_basic) as sender from inquiries;
