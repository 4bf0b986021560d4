"""cart, end to end: quantities, derived totals, validation, and the SAVE10 coupon."""
from features_support import Server, expect_refused


def test_quantities_totals_and_coupon():
    with Server("--latency", "0") as server:
        server.dispatch("cart", {"type": "add", "id": "tea", "name": "Tea", "price": 450})
        server.dispatch("cart", {"type": "add", "id": "tea", "name": "Tea", "price": 450})
        server.dispatch("cart", {"type": "add", "id": "mug", "name": "Mug", "price": 1200})
        view = server.state("cart")
        assert [(i["id"], i["quantity"]) for i in view["items"]] == [("tea", 2), ("mug", 1)]
        assert (view["total"], view["badgeCount"]) == (2100, 3)

        before = server.version("cart")
        expect_refused(server, "cart", {"type": "setQuantity", "id": "tea", "quantity": -1},
                       -32602, "/action/quantity")
        assert server.version("cart") == before

        server.dispatch("cart", {"type": "applyCoupon", "code": "NOPE"})
        view = server.state("cart")
        assert view["coupon"] == {
            "status": "failed", "code": "NOPE", "message": "This coupon is not valid."}
        assert server.events("cart") == [{"type": "toast", "message": "This coupon is not valid."}]

        server.dispatch("cart", {"type": "applyCoupon", "code": "SAVE10"})
        view = server.state("cart")
        assert view["coupon"]["status"] == "applied"
        assert [i["price"] for i in view["items"]] == [405, 1080]
        assert view["total"] == 405 * 2 + 1080
        assert [e["type"] for e in server.events("cart")] == ["toast"]

        server.dispatch("cart", {"type": "setQuantity", "id": "mug", "quantity": 0})
        server.dispatch("cart", {"type": "clearCoupon"})
        view = server.state("cart")
        assert view["items"] == [{"id": "tea", "name": "Tea", "price": 450, "quantity": 2}]
        assert view["coupon"] == {"status": "none", "code": None, "message": None}


def test_a_network_failure_is_recoverable():
    with Server("--latency", "0", "--fail-rate", "1") as server:
        server.dispatch("cart", {"type": "add", "id": "a", "name": "A", "price": 100})
        server.dispatch("cart", {"type": "applyCoupon", "code": "SAVE10"})
        coupon = server.state("cart")["coupon"]
        assert coupon["status"] == "failed"
        assert "try again" in coupon["message"].lower()
