// Command svc-voucher issues a single-use payment voucher for a custom hash, signed with the
// PAYMENT_VOUCHER_SECRET that identity-svc is configured with.
package main

import (
	"fmt"
	"os"

	"github.com/svcdev/svc/identity-svc/internal/payment"
)

func main() {
	secret := os.Getenv("PAYMENT_VOUCHER_SECRET")
	if secret == "" {
		fmt.Fprintln(os.Stderr, "svc-voucher: set PAYMENT_VOUCHER_SECRET to identity-svc's voucher secret")
		os.Exit(2)
	}
	fmt.Println(payment.NewVouchers(secret).Issue())
}
