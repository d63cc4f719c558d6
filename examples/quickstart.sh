#!/usr/bin/env bash
# The README's walk-through, as a script: against a running `npm start`, one document goes from upload to a signed
# download. It creates an account and an API key, uploads examples/contract.pdf with two approvers, sends it, acts
# as each approver (Sara signs on her approval page, Omar taps "Approve" in the development inbox, as his WhatsApp
# button would), waits for "approved", then downloads the signed file with no credentials and checks it.
#
#   bash examples/quickstart.sh            # npm start running in another terminal, same folder and environment
#
# Every id is read from the previous answer with jq. Any answer outside 2xx stops the script, printing it.
# WATHIQ_URL (default http://localhost:3000) is where npm start listens; the account is created by
# `npm run cli`, which finds npm start's database from the same environment (DATA_DIR, EMBEDDED_POSTGRES_PORT or
# DATABASE_URL). QUICKSTART_OUT_DIR (default data/quickstart) receives the signed file.
set -euo pipefail
cd "$(dirname "$0")/.."

BASE="${WATHIQ_URL:-http://localhost:3000}"
API="$BASE/api/v1"
OUT_DIR="${QUICKSTART_OUT_DIR:-data/quickstart}"
TIMEOUT="${QUICKSTART_TIMEOUT_SECONDS:-120}"

step() { printf '\n== %s\n' "$*"; }
say() { printf '   %s\n' "$*"; }
fail() {
  printf 'quickstart: FAILED: %s\n' "$*" >&2
  exit 1
}
# Functions stop the script on a failure inside $(…) too (bash 4.4 and later; older bash checks each step below).
shopt -s inherit_errexit 2>/dev/null || true

for tool in curl jq npm; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed (jq: apt-get install jq, brew install jq)"
done

scratch="$(mktemp -d)"
trap 'code=$?; rm -rf "$scratch"; ((code == 0)) || printf "quickstart: stopped (exit status %s)\n" "$code" >&2' EXIT

# call METHOD URL [curl options…]: prints the answer's body; an answer outside 2xx (or no answer) ends the script.
call() {
  local method=$1 url=$2 status
  shift 2
  status="$(curl -sS -o "$scratch/body" -w '%{http_code}' -X "$method" "$url" "$@")" ||
    fail "$method $url: no answer (is npm start running at $BASE?)"
  [[ $status == 2* ]] || fail "$method $url answered $status: $(cat "$scratch/body")"
  cat "$scratch/body"
}

# wait_until DESCRIPTION COMMAND…: runs COMMAND every second until it succeeds, for at most TIMEOUT seconds. Bash
# ignores `set -e` inside COMMAND, so each such command ends the script itself (`|| exit 1`) when a call fails.
wait_until() {
  local what=$1 deadline=$((SECONDS + TIMEOUT))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || fail "no $what within $TIMEOUT s"
    sleep 1
  done
}

step "0. Wathiq answers at $BASE"
health="$(call GET "$API/health")"
say "$(jq -c '.data | {status, postgres: .checks.postgres.status, temporal: .checks.temporal.status}' <<<"$health")"

step "1. An account and its API key (npm run cli -- account:create … --password-stdin)"
email="${QUICKSTART_EMAIL:-quickstart-$(date +%s)-$RANDOM@example.com}"
password="${QUICKSTART_PASSWORD:-$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')}"
account="$(printf '%s\n' "$password" |
  npm run --silent cli -- account:create --email "$email" --name 'Example Co' --plan business --password-stdin)"
auth=(-H "Authorization: Bearer $(jq -er '.api_key + ":" + .api_secret' <<<"$account")")
say "account $(jq -er .account_id <<<"$account") ($email), API key $(jq -er .api_key <<<"$account")"

step "2. Upload examples/contract.pdf with two approvers, in order: Sara signs, then Omar approves"
document="$(call POST "$API/documents" "${auth[@]}" \
  -F 'title_ar=عقد توريد أجهزة' -F 'title_en=Equipment supply contract' -F workflow_type=sequential \
  -F 'approvers[0][name_ar]=سارة المطيري' -F 'approvers[0][name_en]=Sara Almutairi' \
  -F 'approvers[0][phone]=+966501234567' -F 'approvers[0][role_en]=Procurement Manager' \
  -F 'approvers[0][action_type]=sign' \
  -F 'approvers[1][name]=Omar Hassan' -F 'approvers[1][phone]=966551234568' \
  -F 'approvers[1][action_type]=approve_only' \
  -F 'file=@examples/contract.pdf;type=application/pdf')"
doc="$(jq -er .data.id <<<"$document")"
sara="$(jq -er '.data.approvers[] | select(.order_index == 1) | .id' <<<"$document")"
omar="$(jq -er '.data.approvers[] | select(.order_index == 2) | .id' <<<"$document")"
say "$(jq -c '.data | {id, reference, status, page_count}' <<<"$document")"

step "3. Send it: the approval workflow starts and WhatsApp (the console provider) notifies Sara"
sent="$(call POST "$API/documents/$doc/send" "${auth[@]}")"
[[ "$(jq -r .data.status <<<"$sent")" == pending ]] || fail "the sent document reads: $sent"
say "$(jq -c '.data | {reference, status}' <<<"$sent")"

# An approver's page link: its token is what their WhatsApp message's button carries.
token_of() {
  local link
  link="$(call GET "$API/approvers/$1/link" "${auth[@]}")" || exit 1
  jq -er '.data.url | sub("^.*/a/"; "")' <<<"$link"
}
usable_now() {
  local link
  link="$(call GET "$API/approvers/$1/link" "${auth[@]}")" || exit 1
  [[ "$(jq -r .data.usable_now <<<"$link")" == true ]]
}
inbox_has() {
  local page
  page="$(call GET "$BASE/dev/inbox")" || exit 1
  grep -qF "$1" <<<"$page"
}

step "4. Sara: her message is in the development inbox; she signs on her approval page"
sara_token="$(token_of "$sara")"
wait_until "message to Sara in $BASE/dev/inbox" inbox_has "href=\"/a/$sara_token\""
say "her message links to $BASE/a/<her token>"
signed="$(call POST "$BASE/a/$sara_token/complete" -H 'Content-Type: application/json' \
  -d '{"typed_name":"Sara Almutairi"}')"
say "$(jq -c .data <<<"$signed")"

step "5. Omar: his turn comes; he taps \"Approve\" on his message in the development inbox"
wait_until "turn for Omar" usable_now "$omar"
omar_token="$(token_of "$omar")"
message_id=""
find_omar_message() {
  # The inbox's form for a button: <input … name="message_id" value="N" /> and then the button's payload.
  local page
  page="$(call GET "$BASE/dev/inbox")" || exit 1
  message_id="$(tr -d '\n' <<<"$page" | sed -nE \
    "s/.*name=\"message_id\" value=\"([0-9]+)\"[^<]*<input type=\"hidden\" name=\"payload\" value=\"approve:$omar_token\".*/\\1/p")"
  [[ -n $message_id ]]
}
wait_until "Approve button for Omar in $BASE/dev/inbox" find_omar_message
reply="$(curl -sS -o /dev/null -w '%{http_code} %{redirect_url}' -X POST "$BASE/dev/inbox/reply" \
  --data-urlencode "message_id=$message_id" --data-urlencode "payload=approve:$omar_token")"
[[ $reply == 302\ *result=accepted* ]] || fail "the inbox took Omar's reply as: $reply"
say "message #$message_id, reply accepted"

step "6. Follow the status until the signed PDF is made"
last=""
approved() {
  local answer line
  answer="$(call GET "$API/documents/$doc/status" "${auth[@]}")" || exit 1
  line="$(jq -r '.data | "\(.status), \(.progress.completed) of \(.progress.total) approvers done"' <<<"$answer")"
  [[ $line == "$last" ]] || say "$line"
  last=$line
  case "$(jq -r .data.status <<<"$answer")" in
    approved) return 0 ;;
    rejected | voided | expired) fail "the document ended $(jq -c .data <<<"$answer")" ;;
  esac
  [[ "$(jq -r '.data.finalization.state // ""' <<<"$answer")" != failed ]] ||
    fail "finalization failed: $(jq -c .data.finalization <<<"$answer")"
  return 1
}
wait_until "approval" approved

step "7. Download the signed file from its permanent URL, with no credentials, and check it"
download="$(call GET "$API/documents/$doc/download" "${auth[@]}")"
url="$(jq -er .data.download_url <<<"$download")"
file="$OUT_DIR/$(jq -er .data.filename <<<"$download")"
mkdir -p "$OUT_DIR"
curl -sS --fail -o "$file" "$url" || fail "GET $url failed"
[[ "$(head -c 5 "$file")" == %PDF- ]] || fail "$file does not start with %PDF-"
size="$(wc -c <"$file" | tr -d ' ')"
original="$(wc -c <examples/contract.pdf | tr -d ' ')"
((size > original)) || fail "$file ($size bytes) is no larger than the original ($original bytes)"
say "$file: $size bytes (the original: $original)"
if command -v pdfsig >/dev/null 2>&1; then
  verdict="$(pdfsig "$file" 2>&1 || true)"
  grep -q 'Signature is Valid' <<<"$verdict" || fail "pdfsig does not find a valid signature: $verdict"
  grep -q 'Total document signed' <<<"$verdict" || fail "the signature does not cover the whole file: $verdict"
  say "pdfsig: Signature is Valid, Total document signed"
else
  say "(pdfsig not installed: install poppler-utils to check the signature)"
fi

step "Done: $(jq -r .data.filename <<<"$download") is approved and signed"
say "document $doc; in the Temporal UI its workflow is document-$doc"
