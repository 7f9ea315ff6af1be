// Package mail sends the messages of an instance's accounts (password
// reset codes, e-mail verification links, an operator's test message)
// through the instance's own mail server (tenant.Settings.SMTP).
//
// Messages wait in an outbox kept in the store (outbox.go) as service
// documents, their contents sealed with the key ring, so that a message
// queued by a process that then dies is sent by the next one. A Worker
// (worker.go) sends what is due: each attempt of each message is claimed
// first with store.CreateDoc (the first process to create the claim
// sends, the others leave it), so that processes on one MongoDB send a
// message once. A temporary failure (no connection, a 4xx answer) is
// retried with a back-off that doubles; a permanent one (a 5xx answer) or
// the last attempt marks the message failed. Status, attempts and the
// last error are what the admin API shows. A claim whose process died
// mid-attempt is taken over after ClaimLease; a process that died after
// the server accepted the message but before it recorded that sends it
// again (at least once, as mail is).
//
// Templates (templates.go) are Go templates over Vars; an instance's own
// (tenant.Settings.MailTemplates) replace the defaults part by part.
package mail
