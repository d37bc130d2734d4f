module github.com/svcdev/svc/pkg

go 1.26
