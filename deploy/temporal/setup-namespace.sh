#!/bin/sh
# Temporal's namespace job: once the server answers, creates Wathiq's namespace and registers the search attributes
# its workflows set (src/temporal/search-attributes.ts), each only when missing. docker-compose.yml runs it in
# temporalio/admin-tools after the server is up and before the API and the worker start; the tests'
# production-shaped server runs the same script (test/helpers/production-temporal.ts).
#
# TEMPORAL_ADDRESS: the frontend (host:port); TEMPORAL_NAMESPACE (default `default`); TEMPORAL_NAMESPACE_RETENTION:
# how long closed workflows are kept (default 72h).
set -eu
: "${TEMPORAL_ADDRESS:?set TEMPORAL_ADDRESS}"
ns="${TEMPORAL_NAMESPACE:-default}"
retention="${TEMPORAL_NAMESPACE_RETENTION:-72h}"
search_attributes="DocumentStatus DocumentReference AccountId ApprovalAttention"

# A fresh server takes some seconds to answer, and a namespace just created some more to be seen by every role.
retry() {
  tries=0
  until "$@" >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -ge 120 ]; then
      echo "setup-namespace: gave up after $tries tries: $*" >&2
      "$@"
      return 1
    fi
    sleep 1
  done
}

retry temporal operator cluster health
if ! temporal operator namespace describe --namespace "$ns" >/dev/null 2>&1; then
  temporal operator namespace create --namespace "$ns" --retention "$retention"
fi
# Every role finds a new namespace after its next refresh (up to 10 s): the frontend's answers wait for that.
retry temporal operator search-attribute list --namespace "$ns"
existing="$(temporal operator search-attribute list --namespace "$ns")"
for name in $search_attributes; do
  if ! printf '%s\n' "$existing" | grep -qw "$name"; then
    retry temporal operator search-attribute create --namespace "$ns" --name "$name" --type Keyword
  fi
done
echo "setup-namespace: namespace $ns with search attributes $search_attributes"
