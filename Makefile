# Ebb. The two commands people need: `make run` and `make test`. Both install what is missing.
.PHONY: run test e2e screenshots setup client server bench dist doctor sqlx-prepare fmt clean-db

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

# The Playwright suite alone: against a freshly started Ebb, or a running one (BASE_URL and
# E2E_INVITE_CMD; see docs/developer.md). ARGS go to Playwright (a spec file, -g "title").
e2e:
	bash scripts/qa-e2e.sh $(ARGS)

# The README's screenshots (end2end/screenshots), taken from a freshly started Ebb.
screenshots:
	SCREENSHOTS=1 bash scripts/qa-e2e.sh --project=screenshots

bench:
	bash benches/run.sh

# Release artefacts in dist/: tarball, Debian package, container image (see docs/operator.md).
dist:
	bash scripts/dist.sh

# After changing a query or a migration: regenerate the offline query data in .sqlx/.
sqlx-prepare:
	bash -c '. scripts/env.sh && bash scripts/sqlx-prepare.sh'

fmt:
	bash -c '. scripts/env.sh && cargo fmt --all'

# Stops the project-local PostgreSQL and garage, and removes .data (databases, blobs, S3 data).
clean-db:
	bash scripts/pg-local.sh stop; if [ -d .data/garage ]; then bash scripts/s3-local.sh stop .data/garage; fi; rm -rf .data
