/* Dense matrix multiply of fixed 48x48 doubles in i-k-j order, then a
 * column-order walk that strides through memory: regular, reused data. No
 * input, no clock, no randomness, static arrays: every run is the same. */
#include <stdio.h>

#define N 48

static double a[N][N], b[N][N], c[N][N];

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = (double)((i * 7 + j * 3) % 17) - 8.0;
            b[i][j] = (double)((i * 5 + j * 11) % 13) - 6.0;
        }
    for (int i = 0; i < N; i++)
        for (int k = 0; k < N; k++)
            for (int j = 0; j < N; j++)
                c[i][j] += a[i][k] * b[k][j];
    double t = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            t += c[i][j] * b[j][i];
    printf("%.1f\n", t);
    return 0;
}
