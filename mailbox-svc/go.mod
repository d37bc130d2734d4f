module github.com/svcdev/svc/mailbox-svc

go 1.26

require github.com/svcdev/svc/pkg v0.0.0

replace github.com/svcdev/svc/pkg => ../pkg
