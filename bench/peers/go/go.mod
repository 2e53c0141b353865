module cove-bench/peers/go

go 1.22

require github.com/mattn/go-sqlite3 v1.14.53
