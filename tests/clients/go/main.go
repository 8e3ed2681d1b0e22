// go-sql-driver/mysql against a server: tls=preferred (checked on the wire),
// both auth plugins, server-side prepared statements with every common type in both
// directions, long data (COM_STMT_SEND_LONG_DATA), errors by number, transactions,
// and the same answers through client-side interpolation (text protocol).
//
// Environment: TARN_HOST, TARN_PORT, TARN_USER, TARN_PASSWORD (an administrator that
// can create databases and users), TARN_SEED (replays the random payloads).
package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

type checkFailed struct{ msg string }

func fail(format string, args ...any) { panic(checkFailed{fmt.Sprintf(format, args...)}) }

func checkEq(what string, got, want any) {
	if !reflect.DeepEqual(got, want) {
		fail("%s: got %#v, want %#v", what, got, want)
	}
}

func must(what string, err error) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

// expectErr checks that err is MySQL error number errno.
func expectErr(what string, err error, errno uint16) {
	var me *mysql.MySQLError
	if err == nil {
		fail("%s: want error %d, but it succeeded", what, errno)
	}
	if !errors.As(err, &me) {
		fail("%s: want MySQL error %d, got %v", what, errno, err)
	}
	if me.Number != errno {
		fail("%s: want error %d, got %d: %s", what, errno, me.Number, me.Message)
	}
}

func getenv(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

var (
	host     = getenv("TARN_HOST", "127.0.0.1")
	port     = getenv("TARN_PORT", "3306")
	admin    = getenv("TARN_USER", "root")
	adminPw  = os.Getenv("TARN_PASSWORD")
	dbName   = "tarn_go"
	wireMu   sync.Mutex
	wireLogs = map[string]*recordingConn{}
)

// recordingConn keeps the first bytes a connection writes, to see on the wire whether
// the client asked for TLS: an SSLRequest packet (32-byte payload) followed by a TLS
// handshake record (0x16).
type recordingConn struct {
	net.Conn
	mu      sync.Mutex
	written []byte
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if len(c.written) < 64 {
		c.written = append(c.written, p[:min(len(p), 64-len(c.written))]...)
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *recordingConn) usedTLS() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.written
	return len(w) > 36 && w[0] == 32 && w[1] == 0 && w[2] == 0 && w[3] == 1 && w[36] == 0x16
}

var lastConn *recordingConn

func init() {
	mysql.RegisterDialContext("rectcp", func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		rc := &recordingConn{Conn: c}
		wireMu.Lock()
		lastConn = rc
		wireMu.Unlock()
		return rc, nil
	})
}

func dsn(user, pw, db, params string) string {
	return fmt.Sprintf("%s:%s@rectcp(%s)/%s?%s", user, pw, net.JoinHostPort(host, port), db, params)
}

// open returns a pool of at most one connection (so session state is predictable).
func open(user, pw, db, params string) *sql.DB {
	d, err := sql.Open("mysql", dsn(user, pw, db, params))
	must("sql.Open", err)
	d.SetMaxOpenConns(1)
	return d
}

func scalar[T any](what string, q interface {
	QueryRow(string, ...any) *sql.Row
}, query string, args ...any) T {
	var v T
	must(what+": "+query, q.QueryRow(query, args...).Scan(&v))
	return v
}

func main() {
	seed := time.Now().UnixNano() & 0xffffffff
	if s := os.Getenv("TARN_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "go-client: bad TARN_SEED %q\n", s)
			os.Exit(2)
		}
		seed = v
	}
	fmt.Printf("go-client: seed %d (TARN_SEED=%d replays)\n", seed, seed)
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			if cf, ok := r.(checkFailed); ok {
				fmt.Fprintf(os.Stderr, "go-client: FAIL: %s\n", cf.msg)
				os.Exit(1)
			}
			panic(r)
		}
	}()
	run(rand.New(rand.NewSource(seed)))
	fmt.Printf("go-client: PASS (%.1fs)\n", time.Since(start).Seconds())
}

func run(rng *rand.Rand) {
	adm := open(admin, adminPw, "", "tls=preferred")
	defer adm.Close()
	version := scalar[string]("version", adm, "SELECT VERSION()")
	lower := strings.ToLower(version)
	flavor := "mysql"
	if strings.Contains(lower, "mariadb") {
		flavor = "mariadb"
	} else if strings.Contains(lower, "tarn") {
		flavor = "tarn"
	}
	fmt.Printf("go-client: server %s (%s)\n", version, flavor)
	if want := os.Getenv("TARN_EXPECT_SERVER"); want != "" && want != flavor {
		fail("VERSION() is %q: want a %s server (TARN_EXPECT_SERVER=%s)", version, want, want)
	}

	for _, q := range []string{"DROP DATABASE IF EXISTS " + dbName, "CREATE DATABASE " + dbName} {
		_, err := adm.Exec(q)
		must(q, err)
	}
	type account struct{ user, pw, plugin string }
	accounts := []account{{"tarn_go_native", "go-native-pw", "mysql_native_password"}}
	if flavor != "mariadb" {
		accounts = append(accounts, account{"tarn_go_sha2", "go-sha2-pw", "caching_sha2_password"})
	} else {
		fmt.Println("go-client: MariaDB: caching_sha2_password not checked")
	}
	for _, a := range accounts {
		create := fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED WITH %s BY '%s'", a.user, a.plugin, a.pw)
		if flavor == "mariadb" {
			create = fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", a.user, a.pw)
		}
		for _, q := range []string{
			fmt.Sprintf("DROP USER IF EXISTS '%s'@'%%'", a.user),
			create,
			fmt.Sprintf("GRANT ALL PRIVILEGES ON %s.* TO '%s'@'%%'", dbName, a.user),
		} {
			_, err := adm.Exec(q)
			must(q, err)
		}
	}

	// TLS and authentication, per account: tls=preferred must negotiate TLS (the
	// server offers it), tls=false must not.
	for _, a := range accounts {
		for _, tlsParam := range []string{"preferred", "false"} {
			what := fmt.Sprintf("%s tls=%s", a.user, tlsParam)
			d := open(a.user, a.pw, dbName, "tls="+tlsParam)
			checkEq(what+": CURRENT_USER()", scalar[string](what, d, "SELECT CURRENT_USER()"), a.user+"@%")
			wireMu.Lock()
			used := lastConn.usedTLS()
			wireMu.Unlock()
			checkEq(what+": TLS on the wire", used, tlsParam == "preferred")
			d.Close()
		}
		d := open(a.user, a.pw+"x", dbName, "tls=preferred")
		expectErr(a.user+": wrong password", d.Ping(), 1045)
		d.Close()
	}

	user, pw := accounts[0].user, accounts[0].pw
	if len(accounts) > 1 {
		user, pw = accounts[1].user, accounts[1].pw // the caching_sha2 account, over TLS
	}
	db := open(user, pw, dbName, "tls=preferred&parseTime=true&loc=UTC")
	defer db.Close()
	checkPrepared(db, rng)
	checkLongData(user, pw, rng)
	checkBinaryColumns(db)
	checkTransactions(db)
	checkInterpolated(user, pw)

	for _, a := range accounts {
		_, err := adm.Exec(fmt.Sprintf("DROP USER '%s'@'%%'", a.user))
		must("drop user", err)
	}
	_, err := adm.Exec("DROP DATABASE " + dbName)
	must("drop database", err)
}

type row struct {
	id      int64
	tiny    int8
	small   int16
	big     int64
	ubig    uint64
	score   float64
	name    sql.NullString
	data    []byte
	created time.Time
	amount  string
}

func checkPrepared(db *sql.DB, rng *rand.Rand) {
	_, err := db.Exec(`CREATE TABLE vals (id BIGINT PRIMARY KEY, tiny TINYINT NOT NULL, small SMALLINT NOT NULL,
		big BIGINT NOT NULL, ubig BIGINT UNSIGNED NOT NULL, score DOUBLE NOT NULL, name VARCHAR(100),
		data BLOB, created DATETIME(6) NOT NULL, amount DECIMAL(20,4) NOT NULL, UNIQUE KEY (name))`)
	must("create table", err)

	blob := make([]byte, 300+rng.Intn(3000))
	rng.Read(blob)
	rows := []row{
		{1, -128, -32768, math.MinInt64, math.MaxUint64, -1.5e300, sql.NullString{String: "ünïcode \U0001f980 'q' \"dq\" \\", Valid: true}, []byte{0, 1, 2, 0xff, '\'', '\\'}, time.Date(2024, 2, 29, 23, 59, 58, 123456000, time.UTC), "-12345678901234.5678"},
		{2, 127, 32767, math.MaxInt64, 0, 0.1, sql.NullString{}, nil, time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC), "0.0000"},
		{3, 0, 1, 42, 1 << 63, math.Pi, sql.NullString{String: "", Valid: true}, blob, time.Date(2038, 1, 19, 3, 14, 8, 999999000, time.UTC), "99999999999999.9999"},
	}
	ins, err := db.Prepare("INSERT INTO vals (id, tiny, small, big, ubig, score, name, data, created, amount) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	must("prepare insert", err)
	for _, r := range rows {
		res, err := ins.Exec(r.id, r.tiny, r.small, r.big, r.ubig, r.score, r.name, r.data, r.created, r.amount)
		must(fmt.Sprintf("insert row %d", r.id), err)
		n, _ := res.RowsAffected()
		checkEq(fmt.Sprintf("insert row %d: rows affected", r.id), n, int64(1))
	}
	_, err = ins.Exec(4, 0, 0, 0, 0, 0, rows[0].name, nil, time.Now(), "1")
	expectErr("prepared insert of a duplicate unique key", err, 1062)
	must("close insert statement", ins.Close())

	// Prepare-time errors.
	_, err = db.Prepare("SELECT * FROM no_such_table WHERE id = ?")
	expectErr("prepare against a missing table", err, 1146)
	_, err = db.Prepare("SELEKT ?")
	expectErr("prepare of a syntax error", err, 1064)

	sel, err := db.Prepare("SELECT id, tiny, small, big, ubig, score, name, data, created, amount FROM vals WHERE id = ?")
	must("prepare select", err)
	defer sel.Close()
	for _, want := range rows {
		var got row
		must(fmt.Sprintf("select row %d", want.id), sel.QueryRow(want.id).Scan(&got.id, &got.tiny, &got.small, &got.big, &got.ubig, &got.score, &got.name, &got.data, &got.created, &got.amount))
		if want.data == nil {
			checkEq(fmt.Sprintf("row %d: NULL blob", want.id), got.data == nil, true)
			got.data = nil
		}
		checkEq(fmt.Sprintf("row %d through the binary protocol", want.id), got, want)
	}
	err = sel.QueryRow(99).Scan(new(int64), new(int8), new(int16), new(int64), new(uint64), new(float64), new(sql.NullString), new([]byte), new(time.Time), new(string))
	checkEq("select of a missing row", err, sql.ErrNoRows)

	// Column metadata from the prepared statement's result.
	rs, err := sel.Query(1)
	must("query for column types", err)
	types, err := rs.ColumnTypes()
	must("column types", err)
	var names []string
	for _, t := range types {
		names = append(names, t.DatabaseTypeName())
	}
	rs.Close()
	checkEq("column type names", names, []string{"BIGINT", "TINYINT", "SMALLINT", "BIGINT", "UNSIGNED BIGINT", "DOUBLE", "VARCHAR", "BLOB", "DATETIME", "DECIMAL"})

	// Parameters in expressions, and a statement re-executed with different values.
	add, err := db.Prepare("SELECT ? + ?, CONCAT(?, ?), ? IS NULL")
	must("prepare expression", err)
	for i := 0; i < 20; i++ {
		a, b := rng.Int63n(1_000_000), rng.Int63n(1_000_000)
		var sum int64
		var cat string
		var isNull int64
		must("expression", add.QueryRow(a, b, "x", i, nil).Scan(&sum, &cat, &isNull))
		checkEq("? + ?", sum, a+b)
		checkEq("CONCAT(?, ?)", cat, fmt.Sprintf("x%d", i))
		checkEq("? IS NULL", isNull, int64(1))
	}
	add.Close()

	// Many rows through one prepared statement.
	_, err = db.Exec("CREATE TABLE many (id INT PRIMARY KEY, v INT NOT NULL)")
	must("create many", err)
	put, err := db.Prepare("INSERT INTO many VALUES (?, ?)")
	must("prepare many", err)
	var wantSum int64
	for i := 0; i < 1000; i++ {
		v := rng.Int63n(1000)
		wantSum += v
		_, err := put.Exec(i, v)
		must("insert many", err)
	}
	put.Close()
	var count, total int64
	r, err := db.Query("SELECT id, v FROM many WHERE id >= ? ORDER BY id", 0)
	must("select many", err)
	prev := int64(-1)
	for r.Next() {
		var id, v int64
		must("scan many", r.Scan(&id, &v))
		if id != prev+1 {
			fail("ids out of order: %d after %d", id, prev)
		}
		prev = id
		count++
		total += v
	}
	must("rows", r.Err())
	checkEq("rows through a prepared query", count, int64(1000))
	checkEq("sum through a prepared query", total, wantSum)
	checkEq("SUM() in SQL", scalar[int64]("sum", db, "SELECT SUM(v) FROM many WHERE id < ?", 1000), wantSum)

	res, err := db.Exec("UPDATE many SET v = v + 1 WHERE id < ?", 10)
	must("prepared update", err)
	n, _ := res.RowsAffected()
	checkEq("prepared UPDATE rows affected", n, int64(10))
	res, err = db.Exec("DELETE FROM many WHERE id >= ?", 990)
	must("prepared delete", err)
	n, _ = res.RowsAffected()
	checkEq("prepared DELETE rows affected", n, int64(10))

	_, err = db.Exec("CREATE TABLE auto (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(10))")
	must("create auto", err)
	res, err = db.Exec("INSERT INTO auto (s) VALUES (?), (?)", "a", "b")
	must("insert auto", err)
	id, _ := res.LastInsertId()
	n, _ = res.RowsAffected()
	checkEq("LastInsertId of a two-row insert", id, int64(1))
	checkEq("RowsAffected of a two-row insert", n, int64(2))
}

// checkLongData sends a blob larger than the driver's long-data threshold, so it goes
// by COM_STMT_SEND_LONG_DATA in chunks.
func checkLongData(user, pw string, rng *rand.Rand) {
	db := open(user, pw, dbName, "tls=preferred&maxAllowedPacket=65536")
	defer db.Close()
	_, err := db.Exec("CREATE TABLE longdata (id INT PRIMARY KEY, data MEDIUMBLOB, txt MEDIUMTEXT)")
	must("create longdata", err)
	blob := make([]byte, 150_000)
	rng.Read(blob)
	text := strings.Repeat("long text ☃ ", 8000)
	_, err = db.Exec("INSERT INTO longdata VALUES (?, ?, ?)", 1, blob, text)
	must("insert long data", err)
	var gotBlob []byte
	var gotText string
	must("select long data", db.QueryRow("SELECT data, txt FROM longdata WHERE id = ?", 1).Scan(&gotBlob, &gotText))
	if !bytes.Equal(gotBlob, blob) {
		fail("long blob: got %d bytes back, want %d equal bytes", len(gotBlob), len(blob))
	}
	checkEq("long text", gotText, text)
	checkEq("LENGTH of long blob", scalar[int64]("length", db, "SELECT LENGTH(data) FROM longdata WHERE id = ?", 1), int64(len(blob)))
}

// checkBinaryColumns: BINARY(16) (the UUID pattern) and VARBINARY take []byte
// parameters that are not UTF-8 through the binary protocol, come back padded (BINARY)
// and exact, are described as BINARY and VARBINARY, and serve as keys.
func checkBinaryColumns(db *sql.DB) {
	_, err := db.Exec("CREATE TABLE bin (id BINARY(16) PRIMARY KEY, tag VARBINARY(8), KEY tag (tag))")
	must("create bin", err)
	key := []byte{0xff, 0x00, 0xfe}
	tag := []byte{0xfe, 0xff, 0x00}
	_, err = db.Exec("INSERT INTO bin VALUES (?, ?)", key, tag)
	must("insert binary values", err)
	padded := append(append([]byte{}, key...), make([]byte, 13)...)
	rs, err := db.Query("SELECT id, tag FROM bin WHERE id = ?", padded)
	must("select by the padded BINARY key", err)
	types, err := rs.ColumnTypes()
	must("binary column types", err)
	var names []string
	for _, t := range types {
		names = append(names, t.DatabaseTypeName())
	}
	checkEq("binary column type names", names, []string{"BINARY", "VARBINARY"})
	var gotID, gotTag []byte
	checkEq("a row by the padded BINARY key", rs.Next(), true)
	must("scan binary values", rs.Scan(&gotID, &gotTag))
	rs.Close()
	checkEq("BINARY(16) back, padded with zero bytes", gotID, padded)
	checkEq("VARBINARY back", gotTag, tag)
	checkEq("by the VARBINARY key", scalar[int64]("count", db, "SELECT COUNT(*) FROM bin WHERE tag = ?", tag), int64(1))
	checkEq("by the unpadded BINARY key", scalar[int64]("count", db, "SELECT COUNT(*) FROM bin WHERE id = ?", key), int64(0))
	_, err = db.Exec("INSERT INTO bin VALUES (?, ?)", []byte{1}, bytes.Repeat([]byte{0xff}, 9))
	expectErr("VARBINARY(8) given 9 bytes", err, 1406)
}

func checkTransactions(db *sql.DB) {
	_, err := db.Exec("CREATE TABLE acct (id INT PRIMARY KEY, bal INT NOT NULL)")
	must("create acct", err)
	_, err = db.Exec("INSERT INTO acct VALUES (1, 100), (2, 100)")
	must("fill acct", err)
	other := open(admin, adminPw, dbName, "tls=preferred")
	defer other.Close()

	tx, err := db.Begin()
	must("begin", err)
	_, err = tx.Exec("UPDATE acct SET bal = bal - ? WHERE id = ?", 40, 1)
	must("tx update", err)
	stmt, err := tx.Prepare("INSERT INTO acct VALUES (?, ?)")
	must("tx prepare", err)
	_, err = stmt.Exec(3, 7)
	must("tx insert", err)
	_, err = stmt.Exec(1, 1)
	expectErr("duplicate inside a transaction", err, 1062)
	checkEq("own changes inside the transaction", scalar[int64]("tx sum", tx, "SELECT SUM(bal) FROM acct"), int64(167))
	checkEq("another session during the transaction", scalar[int64]("sum", other, "SELECT SUM(bal) FROM acct"), int64(200))
	must("rollback", tx.Rollback())
	checkEq("after rollback", scalar[int64]("sum", other, "SELECT SUM(bal) FROM acct"), int64(200))

	tx, err = db.Begin()
	must("begin", err)
	_, err = tx.Exec("UPDATE acct SET bal = bal - ? WHERE id = ?", 40, 1)
	must("tx update", err)
	_, err = tx.Exec("UPDATE acct SET bal = bal + ? WHERE id = ?", 40, 2)
	must("tx update", err)
	must("commit", tx.Commit())
	checkEq("after commit", scalar[string]("rows", other, "SELECT GROUP_CONCAT(bal ORDER BY id) FROM acct"), "60,140")
}

// checkInterpolated: the same statements with interpolateParams=true (the text
// protocol, with the driver's escaping) give the same answers as prepared ones.
func checkInterpolated(user, pw string) {
	db := open(user, pw, dbName, "tls=preferred&parseTime=true&loc=UTC&interpolateParams=true")
	defer db.Close()
	var a, b row
	q := "SELECT id, tiny, small, big, ubig, score, name, data, created, amount FROM vals WHERE id = ?"
	must("interpolated select", db.QueryRow(q, 1).Scan(&a.id, &a.tiny, &a.small, &a.big, &a.ubig, &a.score, &a.name, &a.data, &a.created, &a.amount))
	prep := open(user, pw, dbName, "tls=preferred&parseTime=true&loc=UTC")
	defer prep.Close()
	must("prepared select", prep.QueryRow(q, 1).Scan(&b.id, &b.tiny, &b.small, &b.big, &b.ubig, &b.score, &b.name, &b.data, &b.created, &b.amount))
	checkEq("text protocol row equals binary protocol row", a, b)
	checkEq("interpolated string key", scalar[int64]("by name", db, "SELECT id FROM vals WHERE name = ?", b.name.String), int64(1))
	checkEq("interpolated blob key", scalar[int64]("by data", db, "SELECT id FROM vals WHERE data = ?", b.data), int64(1))
	_, err := db.Exec("INSERT INTO vals (id, tiny, small, big, ubig, score, name, created, amount) VALUES (?, 0, 0, 0, 0, 0, ?, ?, 0)", 10, b.name.String, b.created)
	expectErr("interpolated duplicate", err, 1062)
}
