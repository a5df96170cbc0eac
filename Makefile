# Surge: the two commands a newcomer needs are `make run` and `make test`.

.PHONY: run stop test chaos test-unit test-integration test-system bench build contracts client api-fuzz api-clients validate-deploy clean

run:        ## Install what is missing, build, start PostgreSQL, the dev broker and every service
	scripts/local.sh up

stop:       ## Stop everything `make run` started
	scripts/local.sh down

test:       ## Build and run every test against a private PostgreSQL and real brokers
	scripts/test.sh

chaos:      ## 10,000 check-ins while every consumer, the broker, PostgreSQL and the gateway fail once; fails on any loss or duplicate
	SURGE_CHAOS_CHECKINS=$${SURGE_CHAOS_CHECKINS:-10000} scripts/test.sh --filter ChaosSystemTests

test-unit:  ## Only the unit tests (tag unit); a plain `swift test` without PostgreSQL runs these too
	SURGE_TEST_KINDS=unit scripts/test.sh

test-integration:  ## Only the integration tests (tag integration): PostgreSQL and the in-process broker
	SURGE_TEST_KINDS=integration scripts/test.sh

test-system:  ## Only the system tests (tag system): services as processes behind the gateway
	SURGE_TEST_KINDS=system scripts/test.sh

bench:      ## Release build, private stack, benchmarks with printed figures
	scripts/bench.sh

build:
	swift build

contracts:  ## Regenerate docs/events, docs/openapi.json, the gateway route table, what scripts, deployment files and the README say per service and the generated client
	swift build --product surge-admin
	.build/debug/surge-admin event-schemas --output docs/events
	.build/debug/surge-admin openapi --output .
	.build/debug/surge-admin registry-files --output .
	scripts/generate-client.sh

api-fuzz:   ## A bounded schemathesis pass over the public API of a private stack (installs schemathesis in .surge)
	scripts/api-fuzz.sh

api-clients:  ## Generate a Python client from docs/openapi.json with openapi-python-client (installs it in .surge); fails on any warning or unnamed model
	scripts/api-clients.sh

validate-deploy:  ## Check docker-compose.yml, deploy/k8s and deploy/observability offline: Compose schema, docker-compose config, Kubernetes schemas, promtool, the dashboard against the code (installs the validators in .surge)
	scripts/validate-deploy.sh

client:     ## Regenerate Tests/GeneratedClient from docs/openapi.json with swift-openapi-generator (built once in .build-openapi)
	scripts/generate-client.sh

clean: stop
	rm -rf .build .surge
