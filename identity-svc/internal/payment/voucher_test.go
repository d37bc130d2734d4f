package payment

import "testing"

func TestVouchers(t *testing.T) {
	t.Parallel()
	v := NewVouchers("secret")
	ref := v.Issue()
	id, err := v.Verify(ref)
	if err != nil || id == "" {
		t.Fatalf("a fresh voucher does not verify: %v", err)
	}
	if id2, _ := v.Verify(ref); id2 != id {
		t.Fatal("a voucher's id is not stable")
	}
	for _, bad := range []string{"", "svcpay_", "svcpay_abc", ref + "x", "svcpay_other" + ref[len("svcpay_")+24:], "pay_" + ref} {
		if _, err := v.Verify(bad); err == nil {
			t.Errorf("Verify(%q) accepted a bad reference", bad)
		}
	}
	if _, err := NewVouchers("other").Verify(ref); err == nil {
		t.Error("a voucher verified under another secret")
	}
	if _, err := NewVouchers("").Verify(ref); err == nil {
		t.Error("an unconfigured verifier accepted a voucher")
	}
}
