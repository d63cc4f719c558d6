/**
 * The known-answer vector printed in docs/webhooks.md. The signature was computed outside this code base:
 *   { printf '1795340460.'; cat body.json; } | openssl dgst -sha256 -hmac "$SECRET"
 * and checked again with Python's hmac module (recomputed when `sequence` joined the body).
 */
export const KNOWN_ANSWER = {
  secret: 'whsec_0XHmi2B8-Qwp0xXtcysLfog9LXRFDin1-qoU2rThctY',
  timestamp: 1795340460,
  body:
    '{"id":42,"event":"document.approved","sequence":4,"created_at":"2026-11-22T09:41:00+00:00","data":{"document":' +
    '{"id":"0b9c6f8e-4a57-4c1e-9d8f-2f6a1c3e5b7d","reference":"WQT-2026-000042","title_ar":"عقد توريد",' +
    '"title_en":"Supply contract","status":"approved",' +
    '"download_url":"https://wathiq.example/files/q3Xv9aJ0mC7tR2kLpW5yZg/WQT-2026-000042.pdf"}}}',
  signature: 'sha256=e1a271a9a7ead7b507baa4cd0e69432a3fbd109a842fbeb8907412fc1b43c85c',
} as const;
