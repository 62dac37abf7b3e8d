# Ebb. The two commands people need: `make run` and `make test`. Both install what is missing.
.PHONY: run test setup client server bench sqlx-prepare fmt clean-db

run:
	bash scripts/run.sh

test:
	bash scripts/test.sh

setup:
	bash scripts/setup.sh

client:
	bash scripts/build-client.sh

server:
	bash -c '. scripts/env.sh && cargo build --release -p server --bin ebb'

bench:
	bash benches/run.sh

# After changing a query or a migration: regenerate the offline query data in .sqlx/.
sqlx-prepare:
	bash -c '. scripts/env.sh && bash scripts/sqlx-prepare.sh'

fmt:
	bash -c '. scripts/env.sh && cargo fmt --all'

# Stops the project-local PostgreSQL and garage, and removes .data (databases, blobs, S3 data).
clean-db:
	bash scripts/pg-local.sh stop; if [ -d .data/garage ]; then bash scripts/s3-local.sh stop .data/garage; fi; rm -rf .data
