// Package refstore is fenceproof's reference storage service: a TCP service
// that clients write sequenced records to, with an append-only, fsynced
// audit log of every accepted write, that enforces fences storage-side the
// way Ceph's OSD blocklist does. It is the ground truth the oracle
// (audit) reads to prove that no write from a fenced source was
// accepted after the fence was acknowledged.
//
// # Write protocol (TCP, one line per message, "\n"-terminated)
//
//	client: HELLO <id>                  names the session (optional; GetFenceClients lists named sessions)
//	client: WRITE <id> <seq> [payload]  seq: decimal > 0; payload: up to 1024 bytes without spaces
//	server: OK <seq> <t_ns>             accepted: the audit record is on disk (fsynced); t_ns is its time
//	server: REFUSED <seq> <reason>      refused (reason fenced, fenced-open, audit-failed, busy); the server closes
//	server: ERR <message>               malformed request; the server closes
//	client: READ <id>                   read back: the writes of <id> the service accepted
//	server: REC <seq> <t_ns> [payload]  one per accepted write of <id>, in audit order
//	server: END <n>                     after the n REC lines
//
// Ids are 1-128 characters of [A-Za-z0-9._:-]. A connection from a fenced
// source gets "REFUSED 0 fenced" and is closed before any request is read.
// Lines are at most MaxLineLen bytes.
//
// # Files
//
//   - audit log (--audit): one JSON line per accepted write, AuditRecord
//     {"client","addr","seq","t_ns","payload"}, written and fsynced before the OK
//     (concurrent writes share fsyncs: group commit). If
//     a write or fsync fails the service refuses every later write
//     (audit-failed): nothing is ever acknowledged without its record.
//   - refusals log (refused.log beside it): RefusalRecord per refused
//     connection or write, with its reason; refused writes are never in the
//     audit log.
//   - enforcement log (enforce.log beside it): EnforceRecord per blocklist
//     change with the unix ns at which it took effect.
//   - state (--state, default blocklist.json beside the audit log): the
//     blocklist, written atomically (temporary file, fsync, rename, fsync of
//     the directory) before it takes effect, and loaded at start, so a
//     restart never un-fences. A corrupt state file stops the start.
//
// # Enforcement and ordering
//
// A write holds a shared gate from its blocklist check until its audit
// record is fsynced; a blocklist change persists the new list, takes the
// gate exclusively to swap it in, records the time, closes every open
// session from a newly fenced source and only then answers. So every write
// whose audit time is later than the change's answer was checked against
// the new list, which is what lets the driver acknowledge a fence after
// Apply returns. Addresses are compared unmapped (IPv4-mapped IPv6 sources
// match IPv4 blocks) and IPv4-mapped IPv6 blocks of length >= 96 are stored
// as the IPv4 block they cover: the storage side fails closed.
//
// # Admin API (HTTP/JSON)
//
// Served on a unix socket (--admin unix:///path.sock, mode 0660, no token)
// and optionally on TCP (--admin-tcp host:port) where every request needs
// "Authorization: Bearer <token>" with the token of --admin-token-file.
//
//	GET  /v1/blocklist  {"generation":N,"cidrs":[...]}
//	PUT  /v1/blocklist  {"cidrs":[...]} → SetResult {"generation","cidrs","closed","enforced_ns"};
//	                    400 {"error"} names the bad element and changes nothing;
//	                    the answer comes only once the list is persisted and enforced
//	GET  /v1/clients    {"clients":[{"id","addr","since_ns"}]}
//	GET  /v1/stats      {"accepted","refused","sessions","generation"}
//	GET  /v1/logs/NAME  the audit, enforce or refusals log as it is now (JSON lines)
//	GET  /healthz       ok
//
// AdminClient is the Go client (used by the driver's refstore backend,
// driver/backend/refstore). The writer that drives the service is package
// refstore/writer.
package refstore
