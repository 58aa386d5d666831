// expect: E0801
// Neighbours of the supported struct operators, each refused (E0801): an operator used on a
// struct that does not define it, an operator whose body is more than one `return`, and a
// comparison operator whose result is not the struct.
#include <stdio.h>

struct V {
    float x, y;
    V(float a, float b) : x(a), y(b) {}
    V operator+(const V &o) { return V(x + o.x, y + o.y); }
    V operator*(const V &o) {
        float nx = x * o.x;
        return V(nx, y * o.y);
    }
    bool operator==(const V &o) { return x == o.x && y == o.y; }
};

int main(void) {
    V a(1.0f, 2.0f);
    V b(3.0f, 4.0f);
    V c = a - b;
    V d = a * b;
    int same = a == b;
    printf("%f %f %d\n", c.x, d.x, same);
    return 0;
}
