module github.com/clrprof/clrprof

go 1.26.0

require (
	github.com/dave/jennifer v1.7.1
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
	github.com/google/uuid v1.6.0
	golang.org/x/tools v0.52.0
)

require (
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
