int main(void) {
    int *a = (int *)malloc(4 * sizeof(int));
    free(a);
    free(a);
    return 0;
}
