-- Object keys now live in namespaces (`shares/…`, `audit-archive/…`, `exports/…`). Share files
-- move from the storage folder's top level into `shares/` (Ebb moves the files at start-up,
-- before this migration runs); their keys follow.
update shares set blob_key = 'shares/' || blob_key where blob_key !~ '/';
