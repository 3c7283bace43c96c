module github.com/sluice-oss/sluice/clients/go

go 1.22
