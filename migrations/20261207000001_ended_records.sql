-- Prune's search for purged shares past their keeping (the purgeable index leaves purged rows out).
create index shares_purged_at_idx on shares (purged_at) where status = 'purged';
